// TZif reading (RFC 8536): see time_zone.h.
#include "base/time_zone.h"

#include <algorithm>
#include <iterator>

#include "base/env.h"

namespace tpu {
namespace {

int64_t Be(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  if (bytes == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

struct Header {
  int64_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
};

Header ReadHeader(const unsigned char* p) {
  return {Be(p + 20, 4), Be(p + 24, 4), Be(p + 28, 4), Be(p + 32, 4), Be(p + 36, 4), Be(p + 40, 4)};
}

int64_t BlockSize(const Header& h, int time_bytes) {
  return h.timecnt * time_bytes + h.timecnt + h.typecnt * 6 + h.charcnt + h.leapcnt * (time_bytes + 4) +
         h.isstdcnt + h.isutcnt;
}

}  // namespace

TimeZone TimeZone::Utc() { return TimeZone(); }

Result<TimeZone> TimeZone::Load(const std::string& name, const std::string& dir) {
  if (name == "UTC" || name == "Etc/UTC" || name == "Z") return Utc();
  if (name.empty() || name.front() == '/' || name.find("..") != std::string::npos)
    return Status::InvalidArgument("time zone \"" + name + "\": expected an IANA name such as Europe/Paris");
  auto file = Env::Default().ReadFile(dir + "/" + name);
  if (!file.ok()) return Status::NotFound("time zone \"" + name + "\": not in " + dir);
  const std::string& data = *file;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const int64_t size = static_cast<int64_t>(data.size());
  auto bad = [&] { return Status::InvalidArgument("time zone \"" + name + "\": not a TZif file"); };
  if (size < 44 || data.compare(0, 4, "TZif") != 0) return bad();
  Header h1 = ReadHeader(p);
  int64_t v2 = 44 + BlockSize(h1, 4);
  if (data[4] < '2' || v2 + 44 > size || data.compare(v2, 4, "TZif") != 0) return bad();
  Header h = ReadHeader(p + v2);
  const unsigned char* body = p + v2 + 44;
  if (v2 + 44 + BlockSize(h, 8) > size || h.typecnt <= 0) return bad();
  const unsigned char* times = body;
  const unsigned char* idx = times + h.timecnt * 8;
  const unsigned char* types = idx + h.timecnt;
  TimeZone z;
  z.name_ = name;
  auto offset_of = [&](int64_t type) { return static_cast<int32_t>(Be(types + type * 6, 4)); };
  z.initial_offset_ = offset_of(0);
  for (int64_t i = 0; i < h.timecnt; ++i) {
    if (idx[i] >= h.typecnt) return bad();
    z.transitions_.push_back(Be(times + i * 8, 8));
    z.offsets_.push_back(offset_of(idx[i]));
  }
  return z;
}

int64_t TimeZone::OffsetAt(int64_t utc) const {
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc);
  if (it == transitions_.begin()) return initial_offset_;
  return offsets_[static_cast<size_t>(it - transitions_.begin() - 1)];
}

}  // namespace tpu
