// Copyright: the ste authors. Writes seed Report streams for the
// report_stream fuzz target from real test runs: each test of a ste.toml
// is run under the interceptor (RunOneTest, as a worker runs it), its
// absolute dependencies hashed as a worker hashes them (Inventory::Scan of
// external paths against an empty root), and its record encoded by the
// worker's ReportEncoder, the first message naming the worker.
//
//   ste_fuzz_make_report_seeds STE_TOML PRELOAD_SO OUT_DIR MAX_IDS TEST...
//
// writes OUT_DIR/<n>-<test basename>.stream per test and OUT_DIR/all.stream
// with every test in one stream (path ids shared). MAX_IDS is the
// encoder's max_ids_per_message (small values split results into
// continued parts).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report_stream.h"
#include "ste/config.h"
#include "ste/inventory.h"
#include "ste/test_recorder.h"
#include "ste/worker.h"

namespace {

void AppendExternals(const ste::TestRecord& record, std::string* stream) {
  std::vector<std::string> external;
  for (const ste::ScopeDependencies& s : record.deps.scopes) {
    for (const ste::DepKey& k : s.deps) {
      if (!k.path.empty() && k.path[0] == '/' && !ste::IsViewPath(k.path)) external.push_back(k.path);
    }
  }
  if (external.empty()) return;
  char root[] = "/tmp/ste-seed-root-XXXXXX";
  if (mkdtemp(root) == nullptr) return;
  ste::ScanOptions scan;
  scan.root = root;
  scan.external_paths = external;
  scan.threads = 1;
  absl::StatusOr<ste::Inventory> hashed = ste::Inventory::Scan(scan, nullptr);
  rmdir(root);
  if (!hashed.ok()) return;
  std::vector<ste::InventoryEntry> entries;
  for (const ste::InventoryEntry& e : *hashed) {
    if (e.path[0] == '/') entries.push_back(e);
  }
  absl::StatusOr<ste::Inventory> inv = ste::Inventory::FromEntries(std::move(entries), 0);
  if (!inv.ok()) return;
  ste::v1::ReportMessage m;
  m.mutable_external()->set_inventory(inv->Serialize());
  ste::fuzz::AppendFrame(m.SerializeAsString(), stream);
}

void Encode(ste::ReportEncoder& encoder, uint64_t lease, const ste::TestRecord& record,
            bool first, std::string* stream) {
  AppendExternals(record, stream);
  std::vector<ste::v1::ReportMessage> messages;
  encoder.Encode(lease, record, &messages);
  for (size_t i = 0; i < messages.size(); ++i) {
    if (first && i == 0) messages[i].set_worker_id("b1/w1");
    ste::fuzz::AppendFrame(messages[i].SerializeAsString(), stream);
  }
}

bool Write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s STE_TOML PRELOAD_SO OUT_DIR MAX_IDS TEST...\n", argv[0]);
    return 2;
  }
  absl::StatusOr<ste::Config> config = ste::LoadConfig(argv[1]);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    return 1;
  }
  ste::RunOneTestOptions run;
  run.preload_library = argv[2];
  char scratch[] = "/tmp/ste-seed-scratch-XXXXXX";
  if (mkdtemp(scratch) == nullptr) return 1;
  run.scratch_dir = scratch;
  const std::string out_dir = argv[3];
  size_t max_ids = std::strtoul(argv[4], nullptr, 10);
  ste::ReportEncoder all_encoder(max_ids);
  std::string all;
  for (int i = 5; i < argc; ++i) {
    ste::TestRecord record = ste::RunOneTest(*config, argv[i], run);
    ste::ReportEncoder one_encoder(max_ids);
    std::string one;
    Encode(one_encoder, 1, record, true, &one);
    Encode(all_encoder, static_cast<uint64_t>(i), record, i == 5, &all);
    std::string base = argv[i];
    base = base.substr(base.rfind('/') + 1);
    if (!Write(absl::StrCat(out_dir, "/", i - 4, "-", base, ".stream"), one)) return 1;
  }
  rmdir(scratch);
  return Write(out_dir + "/all.stream", all) ? 0 : 1;
}
