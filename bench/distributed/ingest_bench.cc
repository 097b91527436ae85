// Copyright: the ste authors. P8: dependency records ingested by the
// scheduler over loopback gRPC, against writing the same records to a file.
//
//   ingest_bench [--tests N] [--min-deps A] [--max-deps B] [--universe U]
//                [--workers W] [--lease-batch K] [--runs R] [--seed S]
//                [--tmp DIR] [--no-replay]
//
// Before anything is timed, a seeded synthetic record is generated
// (synthetic_workload.h): N tests `t/test_00001.py`..., each with A..B
// dependency records over a universe of U files `src/pkg_<p>/mod_<m>.py`,
// with a shared core, locality and shared libraries.
//
// Each run, interleaved (R runs, medians and spreads at the end):
//   scheduler  a SchedulerServer on 127.0.0.1:0 (real TCP loopback) over a
//              fresh SQLite store; CreateBuild with the N tests and an empty
//              inventory (no_external); W workers registered, each on its own
//              channel and TCP connection. Timed from the moment the W worker
//              threads are released (each then leases K tests at a time and
//              streams their results through ReportEncoder, closing a stream
//              every 256 results as `ste worker` does) to the moment
//              WatchBuild reports the build COMPLETE: every record decoded,
//              validated and fed to the index, the index built (Finish) and
//              stored with inventory and results. "sustained" is the rate up
//              to the last progress message before COMPLETE; the rest
//              ("finalize") is the last test plus storing the baseline.
//   file/text  the same records as "path\tkind\n" lines, W threads, one file
//              each, fwrite (1 MiB buffer) and fsync at the end.
//   file/enc   the same results encoded by ReportEncoder (the bytes the
//              scheduler receives), length-prefixed, W threads, fsync.
// Once, after the runs (unless --no-replay): the same records fed to a
// SelectionIndexBuilder directly from W threads (no RPC), then Finish: what
// the index costs without the transport, and Finish on its own.
#include <grpcpp/grpcpp.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ste/inventory.h"
#include "ste/rpc_common.h"
#include "ste/scheduler_service.h"
#include "ste/selection_index.h"
#include "ste/test_recorder.h"
#include "ste/v1/scheduler.grpc.pb.h"
#include "ste/worker.h"
#include "synthetic_workload.h"

namespace {

using ste::bench::Workload;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// User + system CPU seconds of this process (client and server both).
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Flags {
  ste::bench::WorkloadModel model;
  int workers = 2;
  uint32_t lease_batch = 8;
  int runs = 5;
  std::string tmp;
  bool replay = true;
};

constexpr size_t kResultsPerStream = 256;  // as worker.cc

std::string MakeTempDir(const Flags& f, const char* what) {
  std::string dir = absl::StrCat(f.tmp, "/ste-ingest-", what, "-XXXXXX");
  if (mkdtemp(dir.data()) == nullptr) {
    std::perror(dir.c_str());
    std::exit(1);
  }
  return dir;
}

// ---------------------------------------------------------------------------
// The scheduler over loopback gRPC.

struct IngestRun {
  double seconds = 0;      // released -> COMPLETE seen
  double last_write = 0;   // released -> the last result written
  double sustained_s = 0;  // released -> the last progress before COMPLETE
  uint64_t sustained_records = 0;  // records of the tests done by then
  double cpu = 0;                  // process CPU over `seconds`
  uint64_t records = 0;            // records written by the workers
  uint64_t index_bytes = 0;
  std::string error;
};

std::shared_ptr<grpc::Channel> WorkerChannel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(ste::kDefaultMaxMessageBytes);
  args.SetMaxSendMessageSize(ste::kDefaultMaxMessageBytes);
  // Its own TCP connection, as a worker on another machine would have
  // (channels with equal arguments share one in a process otherwise).
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                   args);
}

// One worker's streams: leases K tests at a time, encodes and writes their
// results; a stream is closed every kResultsPerStream results.
void StreamResults(ste::v1::Scheduler::Stub* stub, const std::string& worker_id,
                   const Workload& w, const Flags& f,
                   std::shared_future<void> go, uint64_t* records,
                   Clock::time_point* last_write, std::string* error) {
  ste::ReportEncoder encoder;
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientWriter<ste::v1::ReportMessage>> writer;
  ste::v1::ReportSummary summary;
  size_t on_stream = 0;
  std::vector<ste::v1::ReportMessage> messages;
  auto close = [&]() -> bool {
    if (!writer) return true;
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    writer.reset();
    ctx.reset();
    if (!s.ok() || summary.accepted() != on_stream) {
      *error =
          absl::StrCat("report: ", s.error_message(), " (", summary.accepted(),
                       " of ", on_stream, " accepted)");
      return false;
    }
    return true;
  };
  go.wait();
  for (;;) {
    ste::v1::LeaseRequest req;
    req.set_worker_id(worker_id);
    req.set_max_tests(f.lease_batch);
    ste::v1::LeaseResponse resp;
    grpc::ClientContext lease_ctx;
    grpc::Status s = stub->Lease(&lease_ctx, req, &resp);
    if (!s.ok()) {
      *error = absl::StrCat("lease: ", s.error_message());
      return;
    }
    if (resp.leases().empty()) {
      if (resp.build_done()) break;
      if (!close()) return;  // idle: the others hold the last tests
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    for (const ste::v1::Lease& l : resp.leases()) {
      auto it = w.index_of.find(l.test());
      if (it == w.index_of.end()) {
        *error = "leased an unknown test " + l.test();
        return;
      }
      if (!writer) {
        ctx = std::make_unique<grpc::ClientContext>();
        summary.Clear();
        writer = stub->Report(ctx.get(), &summary);
        encoder.Reset();
        on_stream = 0;
      }
      messages.clear();
      encoder.Encode(l.lease_id(), w.records[it->second], &messages);
      if (on_stream == 0) messages.front().set_worker_id(worker_id);
      for (const ste::v1::ReportMessage& m : messages) {
        if (!writer->Write(m)) {
          close();
          *error = "a Report stream broke";
          return;
        }
      }
      *records += w.deps[it->second];
      *last_write = Clock::now();
      if (++on_stream >= kResultsPerStream && !close()) return;
    }
  }
  close();
}

IngestRun RunScheduler(const Workload& w, const Flags& f, int64_t mri) {
  IngestRun out;
  const std::string dir = MakeTempDir(f, "sched");
  ste::SchedulerOptions options;
  options.store_url = "sqlite:" + dir + "/s.db";
  options.store_root = dir;
  ste::SchedulerServer::Listen listen;
  listen.address = "127.0.0.1:0";
  auto server = ste::SchedulerServer::Start(options, listen);
  if (!server.ok()) {
    out.error = std::string(server.status().message());
    return out;
  }
  auto control = ste::v1::Scheduler::NewStub(
      ste::MakeChannel((*server)->address(), ste::RpcAuth{}));
  ste::v1::CreateBuildRequest create;
  create.set_mri(mri);
  create.set_no_external(true);
  for (const ste::TestRecord& r : w.records)
    create.add_tests()->set_test(r.test);
  create.set_inventory(ste::Inventory::FromEntries({}, 0)->Serialize());
  ste::v1::CreateBuildResponse created;
  {
    grpc::ClientContext ctx;
    grpc::Status s = control->CreateBuild(&ctx, create, &created);
    if (!s.ok()) {
      out.error = "CreateBuild: " + s.error_message();
      return out;
    }
  }
  std::vector<std::unique_ptr<ste::v1::Scheduler::Stub>> stubs;
  std::vector<std::string> ids;
  for (int i = 0; i < f.workers; ++i) {
    stubs.push_back(
        ste::v1::Scheduler::NewStub(WorkerChannel((*server)->address())));
    ste::v1::RegisterWorkerRequest req;
    req.set_build_id(created.build_id());
    req.set_worker_name(absl::StrCat("ingest_bench/", i));
    req.set_slots(1);
    ste::v1::RegisterWorkerResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = stubs.back()->RegisterWorker(&ctx, req, &resp);
    if (!s.ok()) {
      out.error = "RegisterWorker: " + s.error_message();
      return out;
    }
    ids.push_back(resp.worker_id());
  }
  // The watcher is in place (its first answer waits for a change) before
  // the workers go.
  grpc::ClientContext watch_ctx;
  watch_ctx.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::minutes(10));
  ste::v1::WatchBuildRequest watch;
  watch.set_build_id(created.build_id());
  auto reader = control->WatchBuild(&watch_ctx, watch);

  std::promise<void> go;
  std::shared_future<void> released = go.get_future().share();
  std::vector<uint64_t> records(f.workers, 0);
  std::vector<Clock::time_point> last(f.workers);
  std::vector<std::string> errors(f.workers);
  std::vector<std::thread> threads;
  for (int i = 0; i < f.workers; ++i) {
    threads.emplace_back(StreamResults, stubs[i].get(), ids[i], std::cref(w),
                         std::cref(f), released, &records[i], &last[i],
                         &errors[i]);
  }
  const double cpu0 = CpuSeconds();
  const Clock::time_point t0 = Clock::now();
  go.set_value();
  ste::v1::BuildProgress p;
  Clock::time_point end = t0;
  uint64_t done_records = 0;
  while (reader->Read(&p)) {
    const Clock::time_point now = Clock::now();
    if (p.state() == ste::v1::BUILD_STATE_RUNNING) {
      for (const ste::v1::FinishedTest& t : p.finished()) {
        done_records += w.deps[w.index_of.at(t.test())];
      }
      out.sustained_s = Seconds(t0, now);
      out.sustained_records = done_records;
      continue;
    }
    end = now;
    if (p.state() == ste::v1::BUILD_STATE_COMPLETE) {
      out.index_bytes = p.index_bytes();
    } else {
      out.error = "the build failed: " + p.failure();
    }
    break;
  }
  out.cpu = CpuSeconds() - cpu0;
  out.seconds = Seconds(t0, end);
  (void)reader->Finish();
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < f.workers; ++i) {
    out.records += records[i];
    out.last_write = std::max(out.last_write, Seconds(t0, last[i]));
    if (out.error.empty() && !errors[i].empty()) out.error = errors[i];
  }
  (*server)->Shutdown("the benchmark is over", absl::Seconds(5));
  std::filesystem::remove_all(dir);
  return out;
}

// ---------------------------------------------------------------------------
// The baselines: the same records to local files.

struct FileRun {
  double seconds = 0;
  double cpu = 0;
  uint64_t bytes = 0;
};

// W threads, test t to thread t % W, `write(t, file)` per test, then fflush
// and fsync of each file.
template <typename WriteTest>
FileRun RunFile(const Flags& f, const char* what, WriteTest write_test) {
  const std::string dir = MakeTempDir(f, what);
  FileRun out;
  std::vector<uint64_t> bytes(f.workers, 0);
  const double cpu0 = CpuSeconds();
  const Clock::time_point t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int k = 0; k < f.workers; ++k) {
    threads.emplace_back([&, k] {
      const std::string path = absl::StrCat(dir, "/", k);
      FILE* file = std::fopen(path.c_str(), "wb");
      if (file == nullptr) {
        std::perror(path.c_str());
        std::exit(1);
      }
      std::vector<char> buffer(1 << 20);
      std::setvbuf(file, buffer.data(), _IOFBF, buffer.size());
      size_t on_stream = 0;
      for (uint32_t t = k; t < f.model.tests; t += f.workers) {
        write_test(t, on_stream++, file);
      }
      if (std::fflush(file) != 0 || fsync(fileno(file)) != 0) {
        std::perror(path.c_str());
        std::exit(1);
      }
      bytes[k] = static_cast<uint64_t>(ftell(file));
      std::fclose(file);
    });
  }
  for (std::thread& t : threads) t.join();
  out.seconds = Seconds(t0, Clock::now());
  out.cpu = CpuSeconds() - cpu0;
  for (uint64_t b : bytes) out.bytes += b;
  std::filesystem::remove_all(dir);
  return out;
}

FileRun RunTextFile(const Workload& w, const Flags& f) {
  return RunFile(f, "text", [&](uint32_t t, size_t, FILE* file) {
    for (const ste::ScopeDependencies& s : w.records[t].deps.scopes) {
      for (const ste::DepKey& k : s.deps) {
        const std::string_view kind = ste::DepKindName(k.kind);
        std::fwrite(k.path.data(), 1, k.path.size(), file);
        std::fputc('\t', file);
        std::fwrite(kind.data(), 1, kind.size(), file);
        std::fputc('\n', file);
      }
    }
  });
}

FileRun RunEncodedFile(const Workload& w, const Flags& f) {
  // One encoder per thread; a new "stream" every kResultsPerStream results.
  std::vector<ste::ReportEncoder> encoders(f.workers);
  return RunFile(f, "enc", [&](uint32_t t, size_t n, FILE* file) {
    ste::ReportEncoder& encoder = encoders[t % f.workers];
    if (n % kResultsPerStream == 0) encoder.Reset();
    std::vector<ste::v1::ReportMessage> messages;
    encoder.Encode(t + 1, w.records[t], &messages);
    if (n % kResultsPerStream == 0) messages.front().set_worker_id("b1/w1");
    std::string bytes;
    for (const ste::v1::ReportMessage& m : messages) {
      bytes.clear();
      m.SerializeToString(&bytes);
      const uint32_t size = static_cast<uint32_t>(bytes.size());
      std::fwrite(&size, sizeof size, 1, file);
      std::fwrite(bytes.data(), 1, bytes.size(), file);
    }
  });
}

// ---------------------------------------------------------------------------
// The index builder alone: the same records, no transport.

void Replay(const Workload& w, const Flags& f) {
  ste::SelectionIndexBuilder builder;
  std::vector<std::string> scopes;
  for (const ste::TestRecord& r : w.records)
    scopes.push_back(ste::ScopeOfTest(r.test));
  if (!builder.AddTests(scopes).ok()) std::exit(1);
  std::atomic<uint32_t> next{0};
  const double cpu0 = CpuSeconds();
  const Clock::time_point t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int k = 0; k < f.workers; ++k) {
    threads.emplace_back([&] {
      std::vector<uint32_t> ids[ste::kDepKindCount + 1];
      for (uint32_t t; (t = next++) < f.model.tests;) {
        for (const ste::ScopeDependencies& s : w.records[t].deps.scopes) {
          for (auto& v : ids) v.clear();
          for (const ste::DepKey& k : s.deps) {
            ids[static_cast<int>(k.kind)].push_back(builder.InternPath(k.path));
          }
          const uint32_t test = *builder.FindTest(s.scope);
          for (int kind = 1; kind <= ste::kDepKindCount; ++kind) {
            if (ids[kind].empty()) continue;
            if (!builder
                     .AddTestDependencies(test, ids[kind],
                                          static_cast<ste::DepKind>(kind))
                     .ok()) {
              std::exit(1);
            }
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double ingest = Seconds(t0, Clock::now());
  const double ingest_cpu = CpuSeconds() - cpu0;
  const Clock::time_point t1 = Clock::now();
  const double cpu1 = CpuSeconds();
  absl::StatusOr<std::string> image = builder.Finish();
  const double finish = Seconds(t1, Clock::now());
  const double finish_cpu = CpuSeconds() - cpu1;
  if (!image.ok()) std::exit(1);
  const auto& st = builder.stats();
  std::printf(
      "index builder alone (no RPC, %d threads, once): ingest %.2f s "
      "(%.2f M rec/s, cpu %.2f s); Finish %.2f s (cpu %.2f s: transpose "
      "%.2f, compact %.2f, serialize %.2f), %" PRIu64 " keys, image %.1f MiB\n",
      f.workers, ingest, w.total / ingest / 1e6, ingest_cpu, finish, finish_cpu,
      st.transpose_seconds, st.compact_seconds, st.write_seconds, st.keys,
      image->size() / 1048576.0);
}

// ---------------------------------------------------------------------------

// The figures of one run, in seconds and millions of records per second.
struct RunFigures {
  double sched_s, sched_rate, sustained_rate, finalize_s, sched_cpu;
  double text_s, text_rate, enc_s, enc_rate, ratio_text, ratio_enc;
};

// "median (min-max)" of one figure over the runs.
std::string Spread(const std::vector<RunFigures>& runs,
                   double RunFigures::*figure, double* median = nullptr) {
  std::vector<double> v;
  for (const RunFigures& r : runs) v.push_back(r.*figure);
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  if (median != nullptr) *median = m;
  char out[96];
  std::snprintf(out, sizeof out, "%.2f (%.2f-%.2f)", m, v.front(), v.back());
  return out;
}

int Usage() {
  std::fprintf(stderr,
               "usage: ingest_bench [--tests N] [--min-deps A] [--max-deps B] "
               "[--universe U] [--workers W] [--lease-batch K] [--runs R] "
               "[--seed S] [--tmp DIR] [--no-replay]\n");
  return 2;
}

bool ParseFlags(int argc, char** argv, Flags* f) {
  const char* tmpdir = std::getenv("TMPDIR");
  f->tmp = tmpdir != nullptr && *tmpdir ? tmpdir : "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-replay") {
      f->replay = false;
      continue;
    }
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    const auto number = static_cast<uint32_t>(std::atol(value));
    if (a == "--tests") {
      f->model.tests = number;
    } else if (a == "--min-deps") {
      f->model.min_deps = number;
    } else if (a == "--max-deps") {
      f->model.max_deps = number;
    } else if (a == "--universe") {
      f->model.universe = number;
    } else if (a == "--workers") {
      f->workers = std::max(1, std::atoi(value));
    } else if (a == "--lease-batch") {
      f->lease_batch = std::max<uint32_t>(1, number);
    } else if (a == "--runs") {
      f->runs = std::max(1, std::atoi(value));
    } else if (a == "--seed") {
      f->model.seed = std::strtoull(value, nullptr, 10);
    } else if (a == "--tmp") {
      f->tmp = value;
    } else {
      return false;
    }
  }
  return f->model.tests > 0 && f->model.tests <= 99999 &&
         f->model.min_deps <= f->model.max_deps && f->model.universe >= 100;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  if (!ParseFlags(argc, argv, &f)) return Usage();
  double load[3] = {0, 0, 0};
  if (FILE* file = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(file, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) {
      load[0] = -1;
    }
    std::fclose(file);
  }
  std::printf(
      "ste distributed ingest benchmark (P8)\n"
      "host: %u cores, load average %.2f %.2f %.2f; files under %s\n",
      std::thread::hardware_concurrency(), load[0], load[1], load[2],
      f.tmp.c_str());
  const Clock::time_point g0 = Clock::now();
  const Workload w = ste::bench::GenerateWorkload(f.model);
  std::printf(
      "workload: %u tests, %u-%u records each, universe %u files; %" PRIu64
      " dependency records (content %" PRIu64 ", absent %" PRIu64
      ", listing %" PRIu64
      "), generated in %.1f s (not timed)\n"
      "%d workers, each its own TCP connection to 127.0.0.1, leasing %u "
      "tests at a time, %zu results per Report stream; %d runs, "
      "interleaved\n\n",
      f.model.tests, f.model.min_deps, f.model.max_deps, f.model.universe,
      w.total, w.by_kind[1], w.by_kind[2], w.by_kind[3],
      Seconds(g0, Clock::now()), f.workers, f.lease_batch, kResultsPerStream,
      f.runs);

  std::vector<RunFigures> runs;
  uint64_t text_bytes = 0, enc_bytes = 0, index_bytes = 0;
  for (int run = 0; run < f.runs; ++run) {
    // Alternate the order, so that neither side always runs on a warmer
    // (or a more loaded) machine.
    FileRun text, enc;
    IngestRun sched;
    if (run % 2 == 0) {
      text = RunTextFile(w, f);
      enc = RunEncodedFile(w, f);
      sched = RunScheduler(w, f, run + 1);
    } else {
      sched = RunScheduler(w, f, run + 1);
      enc = RunEncodedFile(w, f);
      text = RunTextFile(w, f);
    }
    if (sched.error.empty() && sched.records != w.total) {
      sched.error =
          absl::StrCat(sched.records, " records sent, expected ", w.total);
    }
    if (!sched.error.empty()) {
      std::fprintf(stderr, "run %d: %s\n", run + 1, sched.error.c_str());
      return 1;
    }
    const double m = 1e6;
    RunFigures r;
    r.sched_s = sched.seconds;
    r.sched_rate = w.total / sched.seconds / m;
    r.sustained_rate = sched.sustained_s > 0
                           ? sched.sustained_records / sched.sustained_s / m
                           : 0;
    r.finalize_s = sched.seconds - sched.sustained_s;
    r.sched_cpu = sched.cpu;
    r.text_s = text.seconds;
    r.text_rate = w.total / text.seconds / m;
    r.enc_s = enc.seconds;
    r.enc_rate = w.total / enc.seconds / m;
    r.ratio_text = sched.seconds / text.seconds;
    r.ratio_enc = sched.seconds / enc.seconds;
    runs.push_back(r);
    text_bytes = text.bytes;
    enc_bytes = enc.bytes;
    index_bytes = sched.index_bytes;
    std::printf(
        "run %d: scheduler %.2f s = %.2f M rec/s (sustained %.2f M/s, last "
        "write at %.2f s, finalize %.2f s), cpu %.2f s | file/text %.2f s = "
        "%.2f M/s, cpu %.2f s | file/enc %.2f s = %.2f M/s, cpu %.2f s\n",
        run + 1, r.sched_s, r.sched_rate, r.sustained_rate, sched.last_write,
        r.finalize_s, r.sched_cpu, r.text_s, r.text_rate, text.cpu, r.enc_s,
        r.enc_rate, enc.cpu);
    std::fflush(stdout);
  }
  double median_rate = 0;
  const std::string rate = Spread(runs, &RunFigures::sched_rate, &median_rate);
  std::printf(
      "\nmedians (min-max) over %d runs:\n"
      "  scheduler, to COMPLETE   %s s, %s M records/s, cpu %s s\n"
      "    sustained (streaming)  %s M records/s\n"
      "    finalize (last test, index Finish, store)  %s s; index %.1f MiB\n"
      "  file, text lines         %s s, %s M records/s (%.0f MiB)\n"
      "  file, encoded messages   %s s, %s M records/s (%.0f MiB, %.2f "
      "bytes/record)\n"
      "  ratio scheduler / file, text lines:       %sx\n"
      "  ratio scheduler / file, encoded messages: %sx\n"
      "P8 target >= 1.00 M records/s into the scheduler: %.2f M/s median — "
      "%s\n",
      f.runs, Spread(runs, &RunFigures::sched_s).c_str(), rate.c_str(),
      Spread(runs, &RunFigures::sched_cpu).c_str(),
      Spread(runs, &RunFigures::sustained_rate).c_str(),
      Spread(runs, &RunFigures::finalize_s).c_str(), index_bytes / 1048576.0,
      Spread(runs, &RunFigures::text_s).c_str(),
      Spread(runs, &RunFigures::text_rate).c_str(), text_bytes / 1048576.0,
      Spread(runs, &RunFigures::enc_s).c_str(),
      Spread(runs, &RunFigures::enc_rate).c_str(), enc_bytes / 1048576.0,
      static_cast<double>(enc_bytes) / w.total,
      Spread(runs, &RunFigures::ratio_text).c_str(),
      Spread(runs, &RunFigures::ratio_enc).c_str(), median_rate,
      median_rate >= 1.0 ? "met" : "MISSED");
  std::fflush(stdout);
  if (f.replay) {
    std::printf("\n");
    Replay(w, f);
  }
  return 0;
}
