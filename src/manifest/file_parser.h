// FileParser: the files one load must parse (read, YAML, schema, decode: all
// per file and independent), parsed on every core while the loader's thread
// assembles targets in order (docs/architecture.md, "Threads").
//
// Worker threads take files in list order from a shared index; Get(i) hands
// the loader file i's outcome, parsing it (or a later one) on the calling
// thread while no worker has it done. With one thread, or too few files to be
// worth a thread, there are no workers: Get(i) parses file i then and there,
// so an incremental one-file load reads and parses exactly as a serial loop.
//
// Thread-safety: the workers call only Tree::Read (which must be safe to call
// from several threads, tree.h) and ParseManifestFile with a SchemaChecker of
// their own. Each outcome is written by one thread and read by the loader's
// thread only after it is published done. Get() is for the loader's thread
// alone; the destructor joins the workers.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "manifest/parsed_file.h"
#include "manifest/tree.h"

namespace tpu::manifest {

struct FileParseLimits {
  uint64_t max_file_bytes = 0;
  YamlLimits yaml;
};

// One file's parse, or why there is none.
struct FileParse {
  std::shared_ptr<const ParsedFile> parsed;  // null on error
  std::string error;                         // when `parsed` is null
  bool read_failed = false;                  // the tree failed to read it (perhaps transient)
};

// Reads and parses `path` on the calling thread.
FileParse ParseFile(const Tree& tree, const std::string& path, const FileParseLimits& limits,
                    SchemaChecker& checker);

class FileParser {
 public:
  // Files per thread below which a thread costs more than it saves: a thread
  // starts in tens of microseconds, a file parses in about a hundred.
  static constexpr size_t kMinFilesPerThread = 8;

  // Starts parsing `paths`. `threads`: how many threads may parse, the
  // calling one included; 0 means one per core.
  // REQUIRES: `tree` outlives the parser.
  FileParser(const Tree& tree, std::vector<std::string> paths, const FileParseLimits& limits, int threads);
  ~FileParser();
  FileParser(const FileParser&) = delete;
  FileParser& operator=(const FileParser&) = delete;

  size_t size() const { return paths_.size(); }
  const std::string& path(size_t i) const { return paths_[i]; }
  // The outcome of file `i`; the caller may move from it.
  FileParse& Get(size_t i);
  // Worker threads started (0: every file is parsed by Get's caller).
  size_t workers() const { return workers_.size(); }

 private:
  // Parses the file at the shared index, if any is left; false when none is.
  bool ParseNext(SchemaChecker& checker);

  const Tree& tree_;
  const FileParseLimits limits_;
  const std::vector<std::string> paths_;
  std::vector<FileParse> files_;
  std::unique_ptr<std::atomic<bool>[]> done_;  // done_[i]: files_[i] is written
  std::atomic<size_t> next_{0};                // the next file nobody has taken
  std::unique_ptr<SchemaChecker> checker_;     // Get's caller's, made on its first parse
  std::vector<std::thread> workers_;
};

}  // namespace tpu::manifest
