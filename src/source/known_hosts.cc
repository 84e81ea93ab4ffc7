// OpenSSH known_hosts parsing and host key checks. See known_hosts.h.
#include "source/known_hosts.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "base/env.h"

namespace tpu::source {
namespace {

bool Base64Decode(const std::string& in, std::string* out) {
  if (in.empty() || in.size() % 4 != 0) return false;
  out->resize(in.size() / 4 * 3);
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out->data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0) return false;
  // EVP_DecodeBlock counts the bytes that padding stands for.
  size_t pad = in.ends_with("==") ? 2 : in.ends_with("=") ? 1 : 0;
  out->resize(static_cast<size_t>(n) - pad);
  return true;
}

// "SHA256:<base64 without padding>", as `ssh-keygen -l` prints it.
std::string Fingerprint(const KnownHosts::Sha256& sha) {
  unsigned char b64[64];
  int n = EVP_EncodeBlock(b64, sha.data(), static_cast<int>(sha.size()));
  std::string s(reinterpret_cast<char*>(b64), static_cast<size_t>(n));
  while (!s.empty() && s.back() == '=') s.pop_back();
  return "SHA256:" + s;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// "|1|<salt>|<hash>": hash = HMAC-SHA1(salt, host).
bool HashedMatch(const std::string& pattern, const std::string& host) {
  size_t bar = pattern.find('|', 3);
  if (bar == std::string::npos) return false;
  std::string salt, hash;
  if (!Base64Decode(pattern.substr(3, bar - 3), &salt) || !Base64Decode(pattern.substr(bar + 1), &hash)) {
    return false;
  }
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha1(), salt.data(), static_cast<int>(salt.size()),
            reinterpret_cast<const unsigned char*>(host.data()), host.size(), mac, &len)) {
    return false;
  }
  return len == hash.size() && CRYPTO_memcmp(mac, hash.data(), len) == 0;
}

// OpenSSH's pattern language: '*' and '?' only. (fnmatch would read the
// brackets of "[host]:port" as a character class.)
bool Glob(const char* p, const char* s) {
  const char* star = nullptr;
  const char* resume = nullptr;
  while (*s) {
    if (*p == '*') {
      star = p++;
      resume = s;
    } else if (*p == '?' || *p == *s) {
      ++p;
      ++s;
    } else if (star) {
      p = star + 1;
      s = ++resume;
    } else {
      return false;
    }
  }
  while (*p == '*') ++p;
  return *p == '\0';
}

}  // namespace

Result<KnownHosts> KnownHosts::Load(const std::string& path) {
  auto text = Env::Default().ReadFile(path);
  if (!text.ok()) return Status::IoError("read known_hosts file " + text.status().message());
  return Parse(*text, path);
}

KnownHosts KnownHosts::Parse(const std::string& text, const std::string& origin) {
  KnownHosts kh;
  kh.origin_ = origin;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string first, hosts, type, key;
    if (!(fields >> first) || first[0] == '#') continue;
    Entry e;
    if (first[0] == '@') {
      if (first != "@revoked") continue;  // @cert-authority: we check plain keys only
      e.revoked = true;
      if (!(fields >> hosts)) continue;
    } else {
      hosts = first;
    }
    std::string blob;
    if (!(fields >> type >> key) || !Base64Decode(key, &blob)) continue;
    SHA256(reinterpret_cast<const unsigned char*>(blob.data()), blob.size(), e.key_sha256.data());
    std::istringstream list(hosts);
    for (std::string p; std::getline(list, p, ',');) {
      if (!p.empty()) e.patterns.push_back(p);
    }
    kh.entries_.push_back(std::move(e));
  }
  return kh;
}

bool KnownHosts::Matches(const Entry& e, const std::string& host) {
  bool matched = false;
  for (const std::string& p : e.patterns) {
    bool negated = p[0] == '!';
    std::string pattern = negated ? p.substr(1) : p;
    bool m = pattern.starts_with("|1|") ? HashedMatch(pattern, host)
                                         : Glob(Lower(pattern).c_str(), host.c_str());
    if (m && negated) return false;  // a negation wins over any other pattern on the line
    matched |= m;
  }
  return matched;
}

Status KnownHosts::Check(const std::string& host, int port, const Sha256& key_sha256) const {
  std::string name = Lower(host);
  if (port > 0 && port != 22) name = "[" + name + "]:" + std::to_string(port);
  auto same_key = [&](const Entry& e) { return CRYPTO_memcmp(e.key_sha256.data(), key_sha256.data(), 32) == 0; };
  for (const Entry& e : entries_) {
    if (e.revoked && same_key(e) && Matches(e, name)) {
      return Status::PermissionDenied("ssh host key of " + name + " is marked @revoked in " + origin_);
    }
  }
  bool known = false;
  for (const Entry& e : entries_) {
    if (e.revoked || !Matches(e, name)) continue;
    if (same_key(e)) return Status::OK();
    known = true;
  }
  if (!known) return Status::PermissionDenied("ssh host " + name + " is not in known_hosts file " + origin_);
  return Status::PermissionDenied("ssh host key of " + name + " (" + Fingerprint(key_sha256) +
                                  ") does not match known_hosts file " + origin_ +
                                  ": refusing to connect (the key changed, or someone is in the middle)");
}

}  // namespace tpu::source
