// CurlTransport's streaming and cancellation, which the Kubernetes client's
// watches use: chunks as they arrive, a caller that stops, a 2xx stream the
// server closes, error bodies kept whole, and a CancelToken that ends a
// transfer the server would hold open for good.
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "http/curl_transport.h"
#include "http/test_server.h"

namespace tpu::http {
namespace {

using testing::TestServer;
using namespace std::chrono_literals;

// A server that sends `lines`, one chunk each, then ends the stream (or, with
// `hold`, keeps it open, sending nothing, until the client goes away or the
// server stops).
void ServeLines(TestServer& srv, std::vector<std::string> lines, bool hold, int status = 200) {
  srv.server().Get("/stream", [lines, hold, status](const httplib::Request&, httplib::Response& res) {
    res.status = status;
    res.set_chunked_content_provider("application/json", [lines, hold](size_t, httplib::DataSink& sink) {
      for (const auto& line : lines) sink.write(line.data(), line.size());
      while (hold && sink.is_writable()) std::this_thread::sleep_for(5ms);
      sink.done();
      return true;
    });
  });
}

HttpRequest Stream(const TestServer& srv, std::string* got) {
  HttpRequest request;
  request.url = srv.url() + "stream";
  request.on_chunk = [got](const char* data, size_t n) {
    got->append(data, n);
    return true;
  };
  return request;
}

TEST(HttpStreamingTest, ChunksGoToTheCallbackNotTheBody) {
  TestServer srv;
  ServeLines(srv, {"{\"a\":1}\n", "{\"b\":2}\n"}, /*hold=*/false);
  CurlTransport t;
  std::string got;
  auto res = t.Send(Stream(srv, &got));
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(got, "{\"a\":1}\n{\"b\":2}\n");
  EXPECT_EQ(res->body, "");
  EXPECT_FALSE(res->cancelled);
}

TEST(HttpStreamingTest, ACallbackThatStopsEndsTheTransferWithoutAnError) {
  TestServer srv;
  ServeLines(srv, {"first\n"}, /*hold=*/true);
  CurlTransport t;
  HttpRequest request;
  request.url = srv.url() + "stream";
  int calls = 0;
  request.on_chunk = [&](const char*, size_t) { return ++calls < 1; };
  auto res = t.Send(request);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(calls, 1);
}

TEST(HttpStreamingTest, AnErrorAnswerIsKeptWholeAndNeverStreamed) {
  TestServer srv;
  ServeLines(srv, {"{\"kind\":\"Status\",\"code\":410}"}, /*hold=*/false, /*status=*/410);
  CurlTransport t;
  std::string got;
  auto res = t.Send(Stream(srv, &got));
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 410);
  EXPECT_EQ(got, "");
  EXPECT_EQ(res->body, "{\"kind\":\"Status\",\"code\":410}");
}

TEST(HttpStreamingTest, CancelEndsAStreamTheServerHoldsOpen) {
  TestServer srv;
  ServeLines(srv, {"first\n"}, /*hold=*/true);
  CurlTransport t;
  CancelToken cancel;
  std::string got;
  HttpRequest request = Stream(srv, &got);
  request.cancel = &cancel;
  std::thread canceller([&] {
    // Cancel only once the stream is open and has delivered its first line.
    while (srv.request_count() == 0) std::this_thread::sleep_for(5ms);
    std::this_thread::sleep_for(50ms);
    cancel.Cancel();
  });
  auto res = t.Send(request);  // with no cancel this would never return
  canceller.join();
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_TRUE(res->cancelled);
  EXPECT_EQ(got, "first\n");
}

TEST(HttpStreamingTest, ACancelledTokenSendsNothing) {
  TestServer srv;
  ServeLines(srv, {"x\n"}, /*hold=*/false);
  CurlTransport t;
  CancelToken cancel;
  cancel.Cancel();
  std::string got;
  HttpRequest request = Stream(srv, &got);
  request.cancel = &cancel;
  auto res = t.Send(request);
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(res->cancelled);
  EXPECT_EQ(srv.request_count(), 0u);

  cancel.Reset();  // re-armed: the next call goes through
  res = t.Send(request);
  ASSERT_TRUE(res.ok());
  EXPECT_FALSE(res->cancelled);
  EXPECT_EQ(got, "x\n");
}

TEST(HttpStreamingTest, ACancellableCallNeverSharesItsConnection) {
  // The token's socket callbacks stay with the connection, so it must not be
  // left in the cache for a later call (whose token may be gone) to reuse.
  TestServer srv;
  ServeLines(srv, {"x\n"}, /*hold=*/false);
  CurlTransport t;
  std::string got;
  ASSERT_TRUE(t.Send(Stream(srv, &got)).ok());
  ASSERT_TRUE(t.Send(Stream(srv, &got)).ok());
  EXPECT_EQ(t.connections_opened(), 1);  // plain calls share one connection
  CancelToken cancel;
  HttpRequest request = Stream(srv, &got);
  request.cancel = &cancel;
  ASSERT_TRUE(t.Send(request).ok());
  ASSERT_TRUE(t.Send(request).ok());
  EXPECT_EQ(t.connections_opened(), 3);  // each cancellable call opened its own
}

TEST(HttpStreamingTest, ADeleteWithoutABodySendsNoBodyHeaders) {
  TestServer srv;
  srv.server().Delete("/thing", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  CurlTransport t;
  HttpRequest request;
  request.method = "DELETE";
  request.url = srv.url() + "thing";
  auto res = t.Send(request);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  auto seen = srv.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].headers.count("Content-Type"), 0u);
  EXPECT_EQ(seen[0].headers.count("Content-Length"), 0u);
}

}  // namespace
}  // namespace tpu::http
