// Error classification: what the executor must tell apart (429, 5xx,
// incompatible operation, quota 403, permission 403, 404, 409, dropped
// connections), in GKE's and Compute's error shapes, and Retry-After.
#include "cloud/api_error.h"

#include <gtest/gtest.h>

namespace tpu::cloud {
namespace {

http::HttpResponse Response(int status, std::string body, http::HttpHeaders headers = {}) {
  http::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

TEST(ApiErrorTest, GkeIncompatibleOperationIsFailedPreconditionAndRetryable) {
  auto e = ApiErrorFromResponse("POST projects/p/locations/l/clusters/c/nodePools",
                                Response(400, R"({"error":{"code":400,"message":"Cluster is running incompatible operation operation-1.","status":"FAILED_PRECONDITION"}})"));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.status, "FAILED_PRECONDITION");
  EXPECT_TRUE(e.incompatible_operation());
  EXPECT_TRUE(e.retryable());
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(e.ToStatus().message(),
            "POST projects/p/locations/l/clusters/c/nodePools: 400 FAILED_PRECONDITION: "
            "Cluster is running incompatible operation operation-1.");
}

// Compute's optimistic lock (Metadata.fingerprint): "412 conditionNotMet".
TEST(ApiErrorTest, StaleFingerprint412IsPreconditionFailedAndNotRetryable) {
  auto e = ApiErrorFromResponse("POST projects/p/zones/z/instances/i/setMetadata",
                                Response(412, R"({"error":{"code":412,"message":"Supplied fingerprint does not match current metadata fingerprint.","errors":[{"message":"Supplied fingerprint does not match current metadata fingerprint.","domain":"global","reason":"conditionNotMet"}]}})"));
  EXPECT_TRUE(e.precondition_failed());
  EXPECT_EQ(e.status, "FAILED_PRECONDITION");
  EXPECT_EQ(e.reason, "conditionNotMet");
  EXPECT_FALSE(e.incompatible_operation());
  EXPECT_FALSE(e.retryable());
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kFailedPrecondition);
}

TEST(ApiErrorTest, TooManyOperations429WithRetryAfter) {
  auto e = ApiErrorFromResponse("POST x", Response(429, R"({"error":{"code":429,"message":"Too many operations","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED"}]}})",
                                                   {{"retry-after", "12"}}));
  EXPECT_TRUE(e.rate_limited());
  EXPECT_TRUE(e.retryable());
  EXPECT_FALSE(e.quota_exceeded());
  EXPECT_EQ(e.reason, "RATE_LIMIT_EXCEEDED");
  ASSERT_TRUE(e.retry_after.has_value());
  EXPECT_EQ(e.retry_after->count(), 12);
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kUnavailable);
}

TEST(ApiErrorTest, ComputeQuota403IsResourceExhaustedAndNotRetryable) {
  auto e = ApiErrorFromResponse("POST projects/p/zones/z/instanceGroupManagers",
                                Response(403, R"({"error":{"code":403,"message":"Quota 'TPU_V7X' exceeded.  Limit: 0.0 in region us-central1.","errors":[{"message":"Quota exceeded","domain":"usageLimits","reason":"quotaExceeded"}]}})"));
  EXPECT_EQ(e.reason, "quotaExceeded");
  EXPECT_EQ(e.status, "PERMISSION_DENIED");
  EXPECT_TRUE(e.quota_exceeded());
  EXPECT_FALSE(e.retryable());
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kResourceExhausted);
}

TEST(ApiErrorTest, GkeInsufficientRegionalQuota) {
  auto e = ApiErrorFromResponse("POST x", Response(403, R"({"error":{"code":403,"message":"Insufficient regional quota to satisfy request: resource \"TPUS\"","status":"PERMISSION_DENIED"}})"));
  EXPECT_TRUE(e.quota_exceeded());
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kResourceExhausted);
}

TEST(ApiErrorTest, PermissionDeniedIsNotQuota) {
  auto e = ApiErrorFromResponse("GET x", Response(403, R"({"error":{"code":403,"message":"Required 'container.clusters.list' permission","status":"PERMISSION_DENIED"}})"));
  EXPECT_FALSE(e.quota_exceeded());
  EXPECT_FALSE(e.retryable());
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kPermissionDenied);
}

TEST(ApiErrorTest, NotFoundAndAlreadyExists) {
  auto nf = ApiErrorFromResponse("GET x", Response(404, R"({"error":{"code":404,"message":"Not found: np","status":"NOT_FOUND"}})"));
  EXPECT_TRUE(nf.not_found());
  EXPECT_FALSE(nf.retryable());
  EXPECT_EQ(nf.ToStatus().code(), Status::Code::kNotFound);
  auto ae = ApiErrorFromResponse("POST x", Response(409, R"({"error":{"code":409,"message":"Already exists: np","status":"ALREADY_EXISTS"}})"));
  EXPECT_TRUE(ae.already_exists());
  EXPECT_FALSE(ae.incompatible_operation());
  EXPECT_EQ(ae.ToStatus().code(), Status::Code::kAlreadyExists);
}

TEST(ApiErrorTest, ServerErrorsWithoutJsonKeepTheBody) {
  auto e = ApiErrorFromResponse("GET x", Response(502, "<html>Bad Gateway</html>"));
  EXPECT_TRUE(e.server_error());
  EXPECT_TRUE(e.retryable());
  EXPECT_EQ(e.message, "<html>Bad Gateway</html>");
  EXPECT_EQ(e.status, "INTERNAL");
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kUnavailable);
}

TEST(ApiErrorTest, DroppedConnectionIsRetryable) {
  auto e = ApiErrorFromTransport("GET x", Status::Unavailable("GET http://h/x: Connection reset by peer"));
  EXPECT_EQ(e.http_status, 0);
  EXPECT_TRUE(e.retryable());
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kUnavailable);
  auto t = ApiErrorFromTransport("GET x", Status::DeadlineExceeded("timeout"));
  EXPECT_TRUE(t.retryable());
  EXPECT_EQ(t.ToStatus().code(), Status::Code::kDeadlineExceeded);
}

TEST(ApiErrorTest, InvalidArgumentIsNotRetryable) {
  auto e = ApiErrorFromResponse("POST x", Response(400, R"({"error":{"code":400,"message":"Invalid machine type","status":"INVALID_ARGUMENT"}})"));
  EXPECT_FALSE(e.retryable());
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kInvalidArgument);
}

TEST(ApiErrorTest, RetryAfterForms) {
  auto now = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(ParseRetryAfter("30", now)->count(), 30);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:50:07 GMT", now)->count(), 30);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now)->count(), 0);
  EXPECT_FALSE(ParseRetryAfter("soon", now).has_value());
  EXPECT_FALSE(ParseRetryAfter("", now).has_value());
}

TEST(ApiErrorTest, ApiResultCarriesErrorAndStatus) {
  ApiResult<int> ok(3);
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  ApiResult<int> bad(ApiErrorFromResponse("GET x", Response(404, "{}")));
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(bad.error().not_found());
  EXPECT_EQ(bad.status().code(), Status::Code::kNotFound);
  Result<int> plain = std::move(bad).ToResult();
  EXPECT_EQ(plain.status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace tpu::cloud
