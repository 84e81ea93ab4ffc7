# tpu-provisioner on Debian bookworm: build with the same packages as
# scripts/setup.sh, run on bookworm-slim as a non-root user (65532) with only
# the shared libraries the binary links. Used by deploy/ (image tpu-provisioner).
#   docker build -t tpu-provisioner:dev .
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/setup.sh scripts/setup.sh
# setup.sh installs the build packages and unpacks valijson's headers into .deps/.
RUN apt-get update -qq && ./scripts/setup.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPU_BUILD_TESTS=OFF -DTPU_BUILD_BENCH=OFF \
 && cmake --build /build --target tpu-provisioner -j"$(nproc)" \
 && strip --strip-debug /build/bin/tpu-provisioner

FROM debian:bookworm-slim
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      ca-certificates libyaml-0-2 libyaml-cpp0.7 libgit2-1.5 libcurl4 libssl3 libspdlog1.10 libfmt9 libsimdjson14 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/bin/tpu-provisioner /usr/local/bin/tpu-provisioner
USER 65532:65532
WORKDIR /var/lib/tpu-provisioner
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/tpu-provisioner"]
CMD ["watch", "--help"]
