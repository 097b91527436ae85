// Copyright: the ste authors. SelectionIndexBuilder: per-test dependency
// sets in, selection index image out (format: ste/selection_index.h).
//
// Ingestion keeps each test's dependency set as run lists of path ids
// (selection_index_transpose.h); Finish transposes them into one roaring
// bitmap of test ids per key, compacts those, and lays the file out.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ste/atomic_file.h"
#include "selection_index_format.h"
#include "roaring_validate.h"
#include "selection_index_transpose.h"
#include "ste/selection_index.h"
#include "ste/status_macros.h"

namespace ste {

namespace fmt = index_format;

namespace {

// Where the image goes. WriteAt may be called concurrently for disjoint
// ranges.
class ImageSink {
 public:
  virtual ~ImageSink() = default;
  virtual absl::Status Allocate(uint64_t size) = 0;
  virtual absl::Status WriteAt(uint64_t offset, const char* data,
                               size_t size) = 0;
};

class StringSink : public ImageSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  absl::Status Allocate(uint64_t size) override {
    out_->assign(size, '\0');
    return absl::OkStatus();
  }
  absl::Status WriteAt(uint64_t offset, const char* data,
                       size_t size) override {
    std::memcpy(out_->data() + offset, data, size);
    return absl::OkStatus();
  }

 private:
  std::string* out_;
};

class FileSink : public ImageSink {
 public:
  FileSink(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  absl::Status Allocate(uint64_t size) override {
    if (ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      return Error("ftruncate");
    }
    return absl::OkStatus();
  }
  absl::Status WriteAt(uint64_t offset, const char* data,
                       size_t size) override {
    while (size > 0) {
      ssize_t n = pwrite(fd_, data, size, static_cast<off_t>(offset));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Error("write");
      }
      data += n;
      size -= static_cast<size_t>(n);
      offset += static_cast<uint64_t>(n);
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Error(const char* op) const {
    return absl::InternalError(
        absl::StrCat(op, " ", name_, ": ", std::strerror(errno)));
  }
  int fd_;
  std::string name_;
};

struct ScopeDependency {
  uint32_t path_id;
  DepKind kind;
  uint32_t first_test;
  uint32_t end_test;  // exclusive
};

}  // namespace

struct SelectionIndexBuilder::Impl {
  using Row = index_build::TestRow;

  // A key that made it into the index, in key-table order.
  struct OutputKey {
    uint32_t path_id;
    uint8_t kind;
    Roaring* column;
    uint64_t bitmap_offset = 0;
    uint64_t bitmap_size = 0;
    uint64_t checksum = 0;
  };

  explicit Impl(Options o) : options(o) {}

  int Threads() const {
    int t = options.threads > 0
                ? options.threads
                : static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, t);
  }

  absl::Status CheckUsable() const {
    if (finished) {
      return absl::FailedPreconditionError(
          "selection index builder: already finished");
    }
    if (!tests_added) {
      return absl::FailedPreconditionError(
          "selection index builder: AddTests must come first");
    }
    return absl::OkStatus();
  }

  std::optional<uint32_t> FindTest(std::string_view scope) const {
    auto it = std::lower_bound(scopes.begin(), scopes.end(), scope,
                               [](const std::string& a, std::string_view b) {
                                 return CompareScopes(a, b) < 0;
                               });
    if (it == scopes.end() || *it != scope) return std::nullopt;
    return static_cast<uint32_t>(it - scopes.begin());
  }

  absl::Status Emit(ImageSink* sink);

  Options options;
  Stats stats;
  bool tests_added = false;
  bool finished = false;
  std::vector<std::string> scopes;  // in id order
  std::vector<Row> rows;            // one per test

  mutable std::mutex paths_mu;
  std::deque<std::string> paths;  // by id; deque: stable addresses
  absl::flat_hash_map<std::string_view, uint32_t> path_ids;
  std::atomic<uint32_t> n_paths{0};

  std::mutex scope_deps_mu;
  std::vector<ScopeDependency> scope_deps;

  // Test cases: (test id, run) -> its name and own keys (path id, kind).
  struct Case {
    std::string name;
    std::set<std::pair<uint32_t, uint8_t>> keys;
  };
  std::mutex cases_mu;
  std::map<std::pair<uint32_t, uint32_t>, Case> cases;

  // The case section (selection_index.h), keys as laid out; "" for none.
  std::string CaseSection(const std::vector<OutputKey>& keys) const;
};

std::string SelectionIndexBuilder::Impl::CaseSection(const std::vector<OutputKey>& keys) const {
  if (cases.empty()) return "";
  std::map<std::pair<uint32_t, uint8_t>, uint32_t> key_index;
  for (size_t i = 0; i < keys.size(); ++i) key_index[{keys[i].path_id, keys[i].kind}] = static_cast<uint32_t>(i);
  std::vector<std::pair<uint32_t, uint32_t>> own;  // (key, case)
  std::string entries, names;
  uint32_t case_id = 0;
  for (const auto& [id, c] : cases) {  // by (test id, run): the run order
    char e[fmt::kCaseEntrySize] = {};
    fmt::EncodeU32(e, id.first);
    fmt::EncodeU32(e + 4, static_cast<uint32_t>(c.name.size()));
    fmt::EncodeU64(e + 8, names.size());
    entries.append(e, sizeof(e));
    names += c.name;
    for (const auto& k : c.keys) {
      auto it = key_index.find(k);
      if (it != key_index.end()) own.emplace_back(it->second, case_id);
    }
    case_id++;
  }
  std::sort(own.begin(), own.end());
  std::string out(16, '\0');
  fmt::EncodeU64(out.data(), cases.size());
  fmt::EncodeU64(out.data() + 8, own.size());
  out += entries;
  for (const auto& [key, c] : own) {
    char e[fmt::kOwnEntrySize];
    fmt::EncodeU32(e, key);
    fmt::EncodeU32(e + 4, c);
    out.append(e, sizeof(e));
  }
  out += names;
  return out;
}

absl::Status SelectionIndexBuilder::Impl::Emit(ImageSink* sink) {
  STE_RETURN_IF_ERROR(CheckUsable());
  if (options.format_version != fmt::kVersion1 && options.format_version != fmt::kVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("selection index: no format version ", options.format_version));
  }
  if (options.keys_per_block == 0 || options.keys_per_block > fmt::kMaxKeysPerBlock) {
    return absl::InvalidArgumentError(absl::StrCat("selection index: keys per block ",
                                                   options.keys_per_block, " not in 1 .. ",
                                                   fmt::kMaxKeysPerBlock));
  }
  finished = true;
  const uint32_t n_path_ids = n_paths.load();
  const int threads =
      static_cast<int>(std::min<uint64_t>(Threads(), std::max(1u, n_path_ids)));

  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  stats = Stats();
  auto phase_start = Clock::now();

  // 1. Transpose rows into columns.
  index_build::Columns columns =
      index_build::Columns::Transpose(rows, n_path_ids, threads);
  stats.pairs = columns.pairs();
  stats.runs = columns.runs();
  std::vector<bool> opaque(rows.size());
  for (size_t t = 0; t < rows.size(); ++t) opaque[t] = rows[t].opaque;
  std::vector<Row>().swap(rows);
  for (const ScopeDependency& d : scope_deps) {
    columns.Find(d.path_id, d.kind)->addRange(d.first_test, d.end_test);
  }

  stats.transpose_seconds = since(phase_start);
  phase_start = Clock::now();

  // 2. Keys in (path bytes, kind) order.
  std::vector<uint32_t> used_paths;
  for (uint32_t p = 0; p < n_path_ids; ++p) {
    for (int k = 1; k <= kDepKindCount; ++k) {
      if (!columns.Find(p, static_cast<DepKind>(k))->isEmpty()) {
        used_paths.push_back(p);
        break;
      }
    }
  }
  std::sort(used_paths.begin(), used_paths.end(),
            [&](uint32_t a, uint32_t b) { return paths[a] < paths[b]; });
  std::vector<OutputKey> keys;
  for (uint32_t p : used_paths) {
    for (int k = 1; k <= kDepKindCount; ++k) {
      Roaring* col = columns.Find(p, static_cast<DepKind>(k));
      if (!col->isEmpty()) {
        keys.push_back(OutputKey{p, static_cast<uint8_t>(k), col});
      }
    }
  }

  auto parallel_for = [&](size_t n, auto&& body) {  // body(begin, end)
    std::vector<std::thread> workers;
    for (int j = 0; j < threads; ++j) {
      const size_t b = n * j / threads, e = n * (j + 1) / threads;
      workers.emplace_back([&body, b, e] { body(b, e); });
    }
    for (std::thread& w : workers) w.join();
  };

  // 3. Compact every bitmap and lay the bitmap area out.
  parallel_for(keys.size(), [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      keys[i].column->runOptimize();
      // Written in the portable format: no bitset of 4096 values or fewer
      // (roaring_validate.h), then runs where they are smaller.
      if (NormalizeForPortable(&keys[i].column->roaring) > 0) keys[i].column->runOptimize();
      keys[i].column->shrinkToFit();
      keys[i].bitmap_size = keys[i].column->getSizeInBytes(/*portable=*/true);
    }
  });
  const bool v1 = options.format_version == fmt::kVersion1;
  const uint64_t header_size = v1 ? fmt::kHeaderSize : fmt::kHeaderSizeV2;
  uint64_t offset = header_size;
  for (OutputKey& k : keys) {
    k.bitmap_offset = offset;
    offset = fmt::AlignUp(offset + k.bitmap_size);
  }
  const uint64_t bitmaps_size = offset - header_size;
  stats.compact_seconds = since(phase_start);
  phase_start = Clock::now();
  for (uint32_t p : used_paths) {
    if (paths[p].size() > UINT32_MAX) {
      return absl::InvalidArgumentError("selection index: path over 4 GiB");
    }
  }

  // 4. The layout of everything after the bitmaps. Version 1: the test and
  // key tables, then the strings (scopes in id order, paths in key order).
  // Version 2: the key blocks (entries, then their paths), then the test
  // table, scopes, fences, fence strings and the outside and view paths.
  // The case section and its footer close both.
  const uint64_t kpb = options.keys_per_block;
  const size_t n_blocks = v1 || keys.empty() ? 0 : (keys.size() - 1) / kpb + 1;
  // Version 2: where each block starts (n_blocks + 1 entries), and whether
  // key i's path is the previous key's in the same block (stored once).
  std::vector<uint64_t> block_at;
  auto shares_path = [&](size_t i) {
    return i % kpb != 0 && keys[i].path_id == keys[i - 1].path_id;
  };
  if (!v1) {
    block_at.push_back(offset);
    for (size_t j = 0; j < n_blocks; ++j) {
      const size_t first = j * kpb, last = std::min<size_t>(keys.size(), first + kpb);
      uint64_t size = (last - first) * fmt::kKeyEntrySize;
      for (size_t i = first; i < last; ++i) {
        if (!shares_path(i)) size += paths[keys[i].path_id].size();
      }
      block_at.push_back(block_at.back() + size);
    }
  }
  const uint64_t test_table_offset = v1 ? offset : block_at.back();
  const uint64_t after_tests = test_table_offset + fmt::kTestEntrySize * scopes.size();
  const uint64_t key_table_offset = after_tests;  // version 1
  const uint64_t strings_offset =                 // version 1: the string area
      key_table_offset + fmt::kKeyEntrySize * keys.size();

  // The checksummed part, file[test_table_offset, file_size): built here,
  // except the version 1 key table and version 2 fences, which hold the
  // bitmaps' and blocks' checksums (filled in after step 5).
  std::string tables(v1 ? strings_offset - test_table_offset : after_tests - test_table_offset, '\0');
  char* test_entries = tables.data();
  std::string scope_bytes;
  for (size_t t = 0; t < scopes.size(); ++t) {
    char* e = test_entries + t * fmt::kTestEntrySize;
    fmt::EncodeU64(e + fmt::kTestScopeOffset, scope_bytes.size());
    fmt::EncodeU32(e + fmt::kTestScopeSize,
                   static_cast<uint32_t>(scopes[t].size()));
    fmt::EncodeU32(e + fmt::kTestFlags, opaque[t] ? fmt::kTestFlagOpaque : 0);
    scope_bytes += scopes[t];
  }
  tables += scope_bytes;
  std::string().swap(scope_bytes);
  std::vector<uint64_t> path_offset;  // version 1: in the string area
  uint64_t fences_offset = 0, outside_offset = 0;
  if (v1) {
    path_offset.resize(n_path_ids);
    for (uint32_t p : used_paths) {
      path_offset[p] = tables.size() - (strings_offset - test_table_offset);
      tables += paths[p];
    }
  } else {
    fences_offset = test_table_offset + tables.size();
    const size_t fence_entries_at = tables.size();
    tables.resize(tables.size() + n_blocks * fmt::kFenceEntrySize, '\0');
    const size_t fence_strings_at = tables.size();
    for (size_t j = 0; j < n_blocks; ++j) {
      const OutputKey& first = keys[j * kpb];
      char* f = tables.data() + fence_entries_at + j * fmt::kFenceEntrySize;
      fmt::EncodeU64(f + fmt::kFenceBlockOffset, block_at[j]);
      fmt::EncodeU64(f + fmt::kFenceBlockSize, block_at[j + 1] - block_at[j]);
      fmt::EncodeU64(f + fmt::kFencePathOffset, tables.size() - fence_strings_at);
      fmt::EncodeU32(f + fmt::kFencePathSize, static_cast<uint32_t>(paths[first.path_id].size()));
      f[fmt::kFenceKind] = static_cast<char>(first.kind);
      tables += paths[first.path_id];  // may move tables: f is not used after
    }
    outside_offset = test_table_offset + tables.size();
    std::vector<uint32_t> outside;  // path ids, in key order, distinct
    for (const OutputKey& k : keys) {
      if (fmt::IsOutsideOrViewPath(paths[k.path_id]) &&
          (outside.empty() || outside.back() != k.path_id)) {
        outside.push_back(k.path_id);
      }
    }
    char n[8];
    fmt::EncodeU64(n, outside.size());
    tables.append(n, 8);
    for (uint32_t id : outside) {
      char size[4];
      fmt::EncodeU32(size, static_cast<uint32_t>(paths[id].size()));
      tables.append(size, 4);
    }
    for (uint32_t id : outside) tables += paths[id];
  }
  const std::string case_section = CaseSection(keys);
  if (!case_section.empty()) {
    char footer[fmt::kCaseFooterSize];
    fmt::EncodeU64(footer, test_table_offset + tables.size());
    fmt::EncodeU64(footer + 8, case_section.size());
    tables += case_section;
    tables.append(footer, sizeof(footer));
  }
  const uint64_t file_size = test_table_offset + tables.size();

  // 5. Serialize the bitmaps, each thread a contiguous stretch of keys,
  // freeing each column once written.
  STE_RETURN_IF_ERROR(sink->Allocate(file_size));
  std::vector<absl::Status> errors(threads);
  {
    std::vector<std::thread> workers;
    for (int j = 0; j < threads; ++j) {
      const size_t b = keys.size() * j / threads;
      const size_t e = keys.size() * (j + 1) / threads;
      workers.emplace_back([&, j, b, e] {
        constexpr size_t kFlushAt = 8 << 20;
        std::string buf;
        uint64_t buf_offset = b < e ? keys[b].bitmap_offset : 0;
        for (size_t i = b; i < e && errors[j].ok(); ++i) {
          OutputKey& k = keys[i];
          const size_t at = buf.size();
          buf.resize(fmt::AlignUp(at + k.bitmap_size), '\0');
          k.column->write(buf.data() + at, /*portable=*/true);
          k.checksum = fmt::BitmapChecksum(buf.data() + at, k.bitmap_size);
          *k.column = Roaring();
          if (buf.size() >= kFlushAt || i + 1 == e) {
            errors[j] = sink->WriteAt(buf_offset, buf.data(), buf.size());
            buf_offset += buf.size();
            buf.clear();
          }
        }
      });
    }
    for (std::thread& w : workers) w.join();
  }
  for (const absl::Status& s : errors) STE_RETURN_IF_ERROR(s);

  // 6. The key entries, now that the bitmaps' checksums are known.
  auto encode_key = [&](char* e, const OutputKey& k, uint64_t path_at) {
    fmt::EncodeU64(e + fmt::kKeyPathOffset, path_at);
    fmt::EncodeU32(e + fmt::kKeyPathSize, static_cast<uint32_t>(paths[k.path_id].size()));
    e[fmt::kKeyKind] = static_cast<char>(k.kind);
    fmt::EncodeU64(e + fmt::kKeyBitmapOffset, k.bitmap_offset);
    fmt::EncodeU64(e + fmt::kKeyBitmapSize, k.bitmap_size);
    fmt::EncodeU64(e + fmt::kKeyBitmapChecksum, k.checksum);
  };
  if (v1) {
    char* key_entries = tables.data() + fmt::kTestEntrySize * scopes.size();
    for (size_t i = 0; i < keys.size(); ++i) {
      encode_key(key_entries + i * fmt::kKeyEntrySize, keys[i], path_offset[keys[i].path_id]);
    }
  } else {
    std::string blocks(block_at.back() - block_at.front(), '\0');
    for (size_t j = 0; j < n_blocks; ++j) {
      const size_t first = j * kpb, last = std::min<size_t>(keys.size(), first + kpb);
      char* b = blocks.data() + (block_at[j] - block_at.front());
      char* path_bytes = b + (last - first) * fmt::kKeyEntrySize;
      uint64_t path_at = 0, at = 0;
      for (size_t i = first; i < last; ++i) {
        const std::string& p = paths[keys[i].path_id];
        if (!shares_path(i)) {
          path_at = at;
          std::memcpy(path_bytes + at, p.data(), p.size());
          at += p.size();
        }
        encode_key(b + (i - first) * fmt::kKeyEntrySize, keys[i], path_at);
      }
      char* f = tables.data() + (fences_offset - test_table_offset) + j * fmt::kFenceEntrySize;
      fmt::EncodeU64(f + fmt::kFenceBlockChecksum,
                     fmt::BitmapChecksum(b, block_at[j + 1] - block_at[j]));
    }
    STE_RETURN_IF_ERROR(sink->WriteAt(block_at.front(), blocks.data(), blocks.size()));
  }

  char header[fmt::kHeaderSizeV2] = {};
  std::memcpy(header + fmt::kOffMagic, fmt::kMagic, sizeof(fmt::kMagic));
  fmt::EncodeU32(header + fmt::kOffVersion, v1 ? fmt::kVersion1 : fmt::kVersion);
  fmt::EncodeU32(header + fmt::kOffHeaderSize, static_cast<uint32_t>(header_size));
  fmt::EncodeU64(header + fmt::kOffFlags, case_section.empty() ? 0 : fmt::kFlagCases);
  fmt::EncodeU64(header + fmt::kOffNTests, scopes.size());
  fmt::EncodeU64(header + fmt::kOffNKeys, keys.size());
  fmt::EncodeU64(header + fmt::kOffBitmapsOffset, header_size);
  fmt::EncodeU64(header + fmt::kOffBitmapsSize, bitmaps_size);
  size_t checksum_at = fmt::kOffChecksum;
  if (v1) {
    fmt::EncodeU64(header + fmt::kOffTestTableOffset, test_table_offset);
    fmt::EncodeU64(header + fmt::kOffKeyTableOffset, key_table_offset);
    fmt::EncodeU64(header + fmt::kOffStringsOffset, strings_offset);
    fmt::EncodeU64(header + fmt::kOffFileSize, file_size);
  } else {
    fmt::EncodeU64(header + fmt::kOff2KeyBlocksOffset, header_size + bitmaps_size);
    fmt::EncodeU32(header + fmt::kOff2KeysPerBlock, static_cast<uint32_t>(kpb));
    fmt::EncodeU64(header + fmt::kOff2TestTableOffset, test_table_offset);
    fmt::EncodeU64(header + fmt::kOff2ScopesOffset, after_tests);
    fmt::EncodeU64(header + fmt::kOff2FencesOffset, fences_offset);
    fmt::EncodeU64(header + fmt::kOff2OutsidePathsOffset, outside_offset);
    fmt::EncodeU64(header + fmt::kOff2FileSize, file_size);
    checksum_at = fmt::kOff2Checksum;
  }
  fmt::EncodeU64(header + checksum_at,
                 fmt::HeaderChecksum(header, tables.data(), tables.size(), checksum_at));
  STE_RETURN_IF_ERROR(
      sink->WriteAt(test_table_offset, tables.data(), tables.size()));
  STE_RETURN_IF_ERROR(sink->WriteAt(0, header, header_size));
  stats.write_seconds = since(phase_start);
  stats.keys = keys.size();
  stats.bytes = file_size;
  return absl::OkStatus();
}

SelectionIndexBuilder::SelectionIndexBuilder()
    : SelectionIndexBuilder(Options()) {}
SelectionIndexBuilder::SelectionIndexBuilder(Options options)
    : impl_(std::make_unique<Impl>(options)) {}
SelectionIndexBuilder::~SelectionIndexBuilder() = default;

absl::Status SelectionIndexBuilder::AddTests(std::vector<std::string> scopes) {
  if (impl_->finished || impl_->tests_added) {
    return absl::FailedPreconditionError(
        "selection index builder: AddTests called twice");
  }
  if (scopes.size() > UINT32_MAX) {
    return absl::InvalidArgumentError("selection index: too many tests");
  }
  for (const std::string& s : scopes) STE_RETURN_IF_ERROR(ValidateScope(s));
  std::sort(scopes.begin(), scopes.end(),
            [](const std::string& a, const std::string& b) {
              return CompareScopes(a, b) < 0;
            });
  for (size_t i = 1; i < scopes.size(); ++i) {
    if (scopes[i] == scopes[i - 1]) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate test scope: ", scopes[i]));
    }
  }
  impl_->scopes = std::move(scopes);
  impl_->rows.resize(impl_->scopes.size());
  impl_->tests_added = true;
  return absl::OkStatus();
}

size_t SelectionIndexBuilder::test_count() const {
  return impl_->scopes.size();
}

std::string_view SelectionIndexBuilder::test_scope(uint32_t id) const {
  return impl_->scopes[id];
}

std::optional<uint32_t> SelectionIndexBuilder::FindTest(
    std::string_view scope) const {
  return impl_->FindTest(scope);
}

uint32_t SelectionIndexBuilder::InternPath(std::string_view path) {
  std::lock_guard<std::mutex> lock(impl_->paths_mu);
  auto it = impl_->path_ids.find(path);
  if (it != impl_->path_ids.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(impl_->paths.size());
  impl_->paths.emplace_back(path);
  impl_->path_ids.emplace(impl_->paths.back(), id);
  impl_->n_paths.store(id + 1, std::memory_order_release);
  return id;
}

size_t SelectionIndexBuilder::path_count() const {
  return impl_->n_paths.load(std::memory_order_acquire);
}

absl::Status SelectionIndexBuilder::AddTestDependencies(
    uint32_t test_id, absl::Span<const uint32_t> path_ids, DepKind kind) {
  STE_RETURN_IF_ERROR(impl_->CheckUsable());
  if (test_id >= impl_->rows.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown test id ", test_id));
  }
  if (!IsValidDepKind(static_cast<uint8_t>(kind))) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid dependency kind ", static_cast<int>(kind)));
  }
  if (path_ids.empty()) return absl::OkStatus();
  const uint32_t n = impl_->n_paths.load(std::memory_order_acquire);
  uint32_t max_id = 0;  // a plain loop vectorizes; max_element does not
  for (uint32_t id : path_ids) max_id = std::max(max_id, id);
  if (max_id >= n) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown path id ", max_id, " (", n, " paths interned)"));
  }
  index_build::AddIds(
      path_ids.data(), path_ids.size(),
      &impl_->rows[test_id].by_kind[static_cast<int>(kind) - 1]);
  return absl::OkStatus();
}

absl::Status SelectionIndexBuilder::AddTestDependency(uint32_t test_id,
                                                      std::string_view path,
                                                      DepKind kind) {
  STE_RETURN_IF_ERROR(impl_->CheckUsable());
  const uint32_t id = InternPath(path);
  return AddTestDependencies(test_id, absl::MakeConstSpan(&id, 1), kind);
}

absl::Status SelectionIndexBuilder::AddScopeDependency(std::string_view scope,
                                                       std::string_view path,
                                                       DepKind kind) {
  STE_RETURN_IF_ERROR(impl_->CheckUsable());
  STE_RETURN_IF_ERROR(ValidateScope(scope));
  if (!IsValidDepKind(static_cast<uint8_t>(kind))) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid dependency kind ", static_cast<int>(kind)));
  }
  const std::vector<std::string>& scopes = impl_->scopes;
  auto first = std::lower_bound(scopes.begin(), scopes.end(), scope,
                                [](const std::string& a, std::string_view b) {
                                  return CompareScopes(a, b) < 0;
                                });
  auto end = std::partition_point(
      first, scopes.end(),
      [&](const std::string& s) { return ScopeContains(scope, s); });
  if (first == end) return absl::OkStatus();
  const uint32_t path_id = InternPath(path);
  std::lock_guard<std::mutex> lock(impl_->scope_deps_mu);
  impl_->scope_deps.push_back(ScopeDependency{
      path_id, kind, static_cast<uint32_t>(first - scopes.begin()),
      static_cast<uint32_t>(end - scopes.begin())});
  return absl::OkStatus();
}

absl::Status SelectionIndexBuilder::AddCase(uint32_t test_id, std::string_view name, uint32_t run,
                                            absl::Span<const uint32_t> path_ids, DepKind kind) {
  STE_RETURN_IF_ERROR(impl_->CheckUsable());
  if (test_id >= impl_->rows.size()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown test id ", test_id));
  }
  if (!IsValidDepKind(static_cast<uint8_t>(kind))) {
    return absl::InvalidArgumentError(absl::StrCat("invalid dependency kind ", static_cast<int>(kind)));
  }
  if (name.empty() || name.size() > UINT32_MAX) {
    return absl::InvalidArgumentError("a case name is 1 byte to 4 GiB");
  }
  const uint32_t n = impl_->n_paths.load(std::memory_order_acquire);
  for (uint32_t id : path_ids) {
    if (id >= n) return absl::InvalidArgumentError(absl::StrCat("unknown path id ", id));
  }
  std::lock_guard<std::mutex> lock(impl_->cases_mu);
  auto [it, added] = impl_->cases.try_emplace({test_id, run});
  if (added) {
    it->second.name = std::string(name);
  } else if (it->second.name != name) {
    return absl::InvalidArgumentError(absl::StrCat("test id ", test_id, ": run ", run, " is case ",
                                                   it->second.name, " already, not ", std::string(name)));
  }
  for (uint32_t id : path_ids) it->second.keys.emplace(id, static_cast<uint8_t>(kind));
  return absl::OkStatus();
}

absl::Status SelectionIndexBuilder::SetOpaque(uint32_t test_id) {
  STE_RETURN_IF_ERROR(impl_->CheckUsable());
  if (test_id >= impl_->rows.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown test id ", test_id));
  }
  impl_->rows[test_id].opaque = true;
  return absl::OkStatus();
}

const SelectionIndexBuilder::Stats& SelectionIndexBuilder::stats() const {
  return impl_->stats;
}

absl::StatusOr<std::string> SelectionIndexBuilder::Finish() {
  std::string image;
  StringSink sink(&image);
  STE_RETURN_IF_ERROR(impl_->Emit(&sink));
  return image;
}

absl::Status SelectionIndexBuilder::WriteFile(const std::string& path) {
  STE_RETURN_IF_ERROR(impl_->CheckUsable());
  // The image is written in place into the temporary (pwrite at offsets),
  // then the file replaced whole (ste/atomic_file.h).
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> file = AtomicFileWriter::Create(path);
  if (!file.ok()) return file.status();
  FileSink sink((*file)->fd(), (*file)->temp_path());
  STE_RETURN_IF_ERROR(impl_->Emit(&sink));
  return (*file)->Commit();
}

}  // namespace ste
