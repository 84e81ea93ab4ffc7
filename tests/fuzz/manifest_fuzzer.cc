// libFuzzer target for the manifest loader: the input is one YAML file of a
// target directory (and, when its first byte is odd, also that target's
// cluster.yaml), loaded through LoadRepo from an in-memory tree. The loader
// must turn any bytes into targets and errors: no crash, no hang, no leak,
// no undefined behaviour (built with ASan and UBSan).
#include <cstddef>
#include <cstdint>
#include <string>

#include "manifest/fake_tree.h"
#include "manifest/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  tpu::manifest::FakeTree tree;
  tree.Write("deploy/proj/cluster-a/pools.yaml", bytes);
  if (size > 0 && (data[0] & 1)) tree.Write("deploy/proj/cluster-a/cluster.yaml", bytes);
  tpu::manifest::Repo repo = tpu::manifest::LoadRepo(tree);
  size_t n = 0;
  for (const auto& e : repo.AllErrors()) n += e.message.size();
  return n == static_cast<size_t>(-1);  // keeps the walk from being optimised away
}
