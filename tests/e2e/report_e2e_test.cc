// `ste report` end to end (scheduler's ste/report.h, cli/report_html.h): a
// real repository made to have a flaky test, an opaque one, a slow one, a
// write/read hazard, a test whose name is HTML, and a misconfigured
// inventory.ignore that an audit catches; selects of every mode and a
// sharded one; then the page, loaded in a real headless Chromium (Debian's
// `chromium`, installed by `make deps`): its DOM asserted on, and a
// screenshot kept in build/test-artifacts/.
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);
const std::string kStaticOpener = STE_CASES_DIR "/static_opener";
const std::string kArtifacts = STE_ARTIFACTS_DIR;
const std::string kHtmlName = "tests/test_<img src=x onerror=alert(1)>.sh";

// The part of `dom` from the element with id `id` to the end of its section.
std::string Section(const std::string& dom, const std::string& id) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t end = dom.find("</section>", at);
  return dom.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) n++;
  return n;
}

// Chromium, headless, on `page`: the DOM it built (--dump-dom) or a
// screenshot (--screenshot=PNG).
Spawned Chromium(const std::string& page, const std::string& action) {
  const std::string profile = MakeTempDir();
  return Spawn({"timeout", "120", "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                "--user-data-dir=" + profile, "--window-size=1100,2600", action, "file://" + page});
}

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir();
    W("lib/a.sh", "a() { echo A; }\n");
    W("lib/b.sh", "b() { echo B; }\n");
    W("settings/mode.conf", "fast\n");  // ignored, yet read: the audit's miss
    W("tests/test_a.sh", ". lib/a.sh\n[ \"$(a)\" = A ]\n");
    W("tests/test_b.sh", ". lib/b.sh\n[ \"$(b)\" = B ]\n");
    W("tests/test_settings.sh", "read mode < settings/mode.conf\n[ \"$mode\" = fast ]\n");
    W("tests/test_flaky.sh", "[ -e settings/ran-once ] && exit 0\n: > settings/ran-once\nexit 1\n");
    W("tests/test_writer.sh", "echo state > data/shared.txt\n");
    W("tests/test_reader.sh", "[ -f data/shared.txt ] && cat data/shared.txt\nexit 0\n");
    W("tests/test_static.sh", "'" + kStaticOpener + "' lib/a.sh\n");
    W("tests/test_slow.sh", "sleep 0.6\n");
    W(kHtmlName, "true\n");
    W("data/seed.txt", "seed\n");
    W("ste.toml",
      "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\nretries = 1\njobs = 1\n"
      "[inventory]\nignore = [\"settings/**\"]\n");
    ::ste::testing::InitGitRepo(root_);
    ASSERT_EQ(::ste::testing::Git(root_, {"add", "-A"}).exit_code, 0);
    ASSERT_EQ(::ste::testing::Git(root_, {"commit", "-qm", "init"}).exit_code, 0);
    Spawned r = Ste({"record", "--progress", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    ASSERT_NE(r.out.find("flaky  tests/test_flaky.sh"), std::string::npos) << r.out;
  }
  void W(const std::string& rel, const std::string& content) { WriteFile(root_ + "/" + rel, content); }
  Spawned Ste(std::vector<std::string> args) {
    args.insert(args.begin(), kSte);
    return Spawn(args, {}, root_);
  }
  std::string root_;
};

TEST_F(Report, ThePageChromiumLoadsShowsTheHistoryTheBaselineAndTheAudits) {
  // Four builds: two subsets, a matrix of two shards (one build), all.
  // (What the writer left behind is a change: gone, nothing changed.)
  ASSERT_EQ(std::remove((root_ + "/data/shared.txt").c_str()), 0);
  Spawned s = Ste({"select"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  // The opaque test is selected whatever changed.
  EXPECT_NE(s.err.find("mode subset: 1 of 9 tests"), std::string::npos) << s.err;
  W("lib/b.sh", "b() { echo B; }\n# touched\n");
  s = Ste({"select"});
  EXPECT_EQ(::ste::testing::SelectedMode(s.err), "subset") << s.err;
  ASSERT_EQ(Ste({"select", "--shard", "1/2"}).exit_code, 0);
  ASSERT_EQ(Ste({"select", "--shard", "2/2"}).exit_code, 0);
  s = Ste({"select", "--all"});
  EXPECT_EQ(::ste::testing::SelectedMode(s.err), "all") << s.err;
  // A what-if and --changed-files are no build.
  ASSERT_EQ(Ste({"select", "--assume-changed", "lib/a.sh"}).exit_code, 0);
  ASSERT_EQ(Ste({"select", "--changed-files"}).exit_code, 0);
  // The hidden change: selected by nothing, caught by the audit.
  W("settings/mode.conf", "slow\n");
  Spawned audit = Ste({"audit", "--fail-on-miss"});
  EXPECT_EQ(audit.exit_code, 1) << audit.err;
  EXPECT_NE(audit.err.find("MISS: tests/test_settings.sh"), std::string::npos) << audit.err;

  ASSERT_EQ(mkdir(kArtifacts.c_str(), 0755) == 0 || errno == EEXIST, true) << kArtifacts;
  const std::string page = kArtifacts + "/report.html";
  Spawned report = Ste({"report", "-o", page});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.err.find(": 4 builds, 1 audits, baseline 1 (9 tests)"), std::string::npos) << report.err;
  const std::string html = ReadFile(page);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "no script";
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg")) << "nothing fetched";
  EXPECT_EQ(html.find("https://"), std::string::npos) << "nothing fetched";

  Spawned dom = Chromium(page, "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0) << "chromium (make deps installs Debian's) failed: " << dom.err;
  const std::string& d = dom.out;
  ASSERT_NE(d.find("<h1>ste report: "), std::string::npos) << d.substr(0, 2000);

  const std::string summary = Section(d, "summary");
  EXPECT_NE(summary.find("data-builds=\"4\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("data-audit-misses=\"1\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("data-audit-ran=\""), std::string::npos) << summary;

  const std::string fraction = Section(d, "selected-fraction");
  EXPECT_NE(fraction.find("<svg"), std::string::npos) << fraction;
  EXPECT_NE(fraction.find("data-points=\"4\""), std::string::npos) << fraction;
  EXPECT_EQ(Count(fraction, "<circle class=\"all\""), 1u) << fraction;
  EXPECT_EQ(Count(fraction, "<circle class=\"pt\""), 3u) << fraction;
  EXPECT_NE(Section(d, "time-saved").find("<polyline"), std::string::npos);

  EXPECT_NE(Section(d, "flaky").find("tests/test_flaky.sh"), std::string::npos) << Section(d, "flaky");
  const std::string opaque = Section(d, "opaque");
  EXPECT_NE(opaque.find("tests/test_static.sh"), std::string::npos) << opaque;
  EXPECT_EQ(opaque.find("why was not kept"), std::string::npos) << "the reason is kept: " << opaque;
  const std::string hazards = Section(d, "hazards");
  EXPECT_NE(hazards.find("tests/test_writer.sh"), std::string::npos) << hazards;
  EXPECT_NE(hazards.find("data/shared.txt"), std::string::npos) << hazards;
  EXPECT_NE(hazards.find("tests/test_reader.sh"), std::string::npos) << hazards;
  const std::string slowest = Section(d, "slowest");
  const size_t first_row = slowest.find("<td class=\"name\">");
  ASSERT_NE(first_row, std::string::npos) << slowest;
  EXPECT_EQ(slowest.find("<td class=\"name\">tests/test_slow.sh<"), first_row) << slowest;
  EXPECT_NE(Section(d, "widest").find("lib/a.sh"), std::string::npos) << Section(d, "widest");
  const std::string audits = Section(d, "audits");
  EXPECT_NE(audits.find("class=\"n miss\""), std::string::npos) << audits;
  EXPECT_NE(audits.find("tests/test_settings.sh"), std::string::npos) << audits;
  EXPECT_NE(audits.find("at most "), std::string::npos) << audits;

  // The name a test chose is text on the page, never an element.
  EXPECT_NE(d.find("test_&lt;img src=x onerror=alert(1)&gt;.sh"), std::string::npos) << Section(d, "slowest");
  EXPECT_EQ(d.find("<img"), std::string::npos);

  const std::string png = kArtifacts + "/report.png";
  std::remove(png.c_str());
  Spawned shot = Chromium(page, "--screenshot=" + png);
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  const std::string bytes = ReadFile(png);
  ASSERT_GT(bytes.size(), 20000u) << png;
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::printf("the report's screenshot: %s\n", png.c_str());
}

TEST_F(Report, AStoreWithoutHistoryOrBaselineStillGivesAPageThatSaysWhy) {
  const std::string empty = MakeTempDir();
  WriteFile(empty + "/ste.toml", "[tests]\ninclude = [\"t/*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n");
  ::ste::testing::InitGitRepo(empty);
  Spawned report = Spawn({kSte, "report", "-o", "-"}, {}, empty);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("No selection is recorded yet"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("No complete baseline"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("No audit is stored yet"), std::string::npos) << report.out;
  EXPECT_EQ(Spawn({kSte, "report", "--top", "0"}, {}, empty).exit_code, 2);
  EXPECT_EQ(Spawn({kSte, "report", "extra"}, {}, empty).exit_code, 2);
}

}  // namespace
}  // namespace ste
