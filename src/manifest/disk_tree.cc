// DiskTree over POSIX calls: opendir/lstat/realpath, and whole-file reads.
#include "manifest/disk_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <openssl/evp.h>

namespace tpu::manifest {
namespace {

Status Errno(const std::string& what) {
  int e = errno;
  std::string m = what + ": " + std::strerror(e);
  return e == ENOENT || e == ENOTDIR ? Status::NotFound(m) : Status::IoError(m);
}

std::string RealPath(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

Result<std::string> ReadFile(const std::string& full, const std::string& rel) {
  int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno(rel);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::InvalidArgument(rel + ": not a regular file");
  }
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  out.resize(got);
  return out;
}

}  // namespace

std::string GitBlobId(std::string_view bytes) {
  std::string header = "blob " + std::to_string(bytes.size());
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha1(), nullptr);
  EVP_DigestUpdate(ctx, header.data(), header.size() + 1);  // with the NUL
  EVP_DigestUpdate(ctx, bytes.data(), bytes.size());
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < len; ++i) {
    hex += kHex[md[i] >> 4];
    hex += kHex[md[i] & 15];
  }
  return hex;
}

Result<std::unique_ptr<DiskTree>> DiskTree::Open(const std::string& root) {
  std::string real = RealPath(root);
  struct stat st;
  if (real.empty() || stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::NotFound(root + ": not a directory");
  return std::unique_ptr<DiskTree>(new DiskTree(real));
}

std::string DiskTree::Resolve(const std::string& rel) const {
  std::string real = RealPath(rel.empty() ? root_ : root_ + "/" + rel);
  if (real.empty()) return "";
  if (real == root_ || (real.size() > root_.size() && real.compare(0, root_.size(), root_) == 0 &&
                        (root_ == "/" || real[root_.size()] == '/')))
    return real;
  return "";
}

Result<std::vector<TreeEntry>> DiskTree::List(const std::string& dir) const {
  std::string full = Resolve(dir);
  if (full.empty()) return Status::NotFound(dir + ": no such directory in the repository");
  DIR* d = opendir(full.c_str());
  if (!d) return Errno(dir);
  std::vector<TreeEntry> out;
  while (struct dirent* de = readdir(d)) {
    std::string name = de->d_name;
    if (name == "." || name == "..") continue;
    std::string rel = dir.empty() ? name : dir + "/" + name;
    std::string path = full + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;  // vanished while listing
    TreeEntry e;
    e.name = name;
    if (S_ISLNK(st.st_mode)) {
      std::string target = Resolve(rel);
      if (target.empty() || stat(target.c_str(), &st) != 0) {
        char buf[PATH_MAX];
        ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
        e.kind = TreeEntry::Kind::kSymlink;
        e.link_target = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
        out.push_back(std::move(e));
        continue;
      }
      path = target;
    }
    if (S_ISDIR(st.st_mode)) {
      e.kind = TreeEntry::Kind::kDirectory;
    } else if (S_ISREG(st.st_mode)) {
      e.kind = TreeEntry::Kind::kFile;
      e.size = static_cast<uint64_t>(st.st_size);
      if (e.size <= kMaxHashedBytes) {
        auto bytes = ReadFile(path, rel);
        if (bytes.ok()) e.id = GitBlobId(*bytes);
      }
    }
    out.push_back(std::move(e));
  }
  closedir(d);
  std::sort(out.begin(), out.end(), [](const TreeEntry& a, const TreeEntry& b) { return a.name < b.name; });
  return out;
}

Result<std::string> DiskTree::Read(const std::string& path) const {
  std::string full = Resolve(path);
  if (full.empty()) return Status::PermissionDenied(path + ": leaves the repository or does not exist; not read");
  return ReadFile(full, path);
}

}  // namespace tpu::manifest
