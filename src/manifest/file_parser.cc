// FileParser: a shared index over the files, worker threads that each keep a
// SchemaChecker (valijson's validator caches regexes; the compiled schemas
// themselves are immutable and shared), and a done flag per file that the
// loader's thread waits on.
#include "manifest/file_parser.h"

#include <algorithm>
#include <system_error>

namespace tpu::manifest {

FileParse ParseFile(const Tree& tree, const std::string& path, const FileParseLimits& limits,
                    SchemaChecker& checker) {
  FileParse out;
  auto bytes = tree.Read(path);
  if (!bytes.ok()) {
    out.read_failed = true;
    out.error = bytes.status().message();
    return out;
  }
  if (bytes->size() > limits.max_file_bytes) {  // grew since it was listed
    out.error = "file is " + std::to_string(bytes->size()) + " bytes; expected at most " +
                std::to_string(limits.max_file_bytes);
    return out;
  }
  out.parsed = std::make_shared<const ParsedFile>(ParseManifestFile(*bytes, limits.yaml, checker));
  return out;
}

FileParser::FileParser(const Tree& tree, std::vector<std::string> paths, const FileParseLimits& limits,
                       int threads)
    : tree_(tree), limits_(limits), paths_(std::move(paths)), files_(paths_.size()),
      done_(new std::atomic<bool>[paths_.size()]) {
  for (size_t i = 0; i < paths_.size(); ++i) done_[i].store(false, std::memory_order_relaxed);
  size_t wanted = threads > 0 ? static_cast<size_t>(threads) : std::max(1u, std::thread::hardware_concurrency());
  wanted = std::min(wanted, files_.size() / kMinFilesPerThread);
  for (size_t w = 1; w < wanted; ++w) {  // the loader's thread is the first
    try {
      workers_.emplace_back([this] {
        SchemaChecker checker;
        while (ParseNext(checker)) {
        }
      });
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones started (or Get's caller alone) parse everything
    }
  }
}

FileParser::~FileParser() {
  // Workers stop once the index passes the end; take what is left so they stop now.
  next_.store(files_.size());
  for (auto& w : workers_) w.join();
}

bool FileParser::ParseNext(SchemaChecker& checker) {
  const size_t i = next_.fetch_add(1);
  if (i >= files_.size()) return false;
  files_[i] = ParseFile(tree_, paths_[i], limits_, checker);
  done_[i].store(true, std::memory_order_release);
  done_[i].notify_one();
  return true;
}

FileParse& FileParser::Get(size_t i) {
  // Files are taken in order, so while file i is not taken the next one
  // taken is at most i: the loader's thread parses what it needs soonest.
  // Once a worker has it, the loader's thread parses later files until then.
  while (!done_[i].load(std::memory_order_acquire)) {
    if (!checker_) checker_ = std::make_unique<SchemaChecker>();
    if (!ParseNext(*checker_)) done_[i].wait(false, std::memory_order_acquire);
  }
  return files_[i];
}

}  // namespace tpu::manifest
