// Copyright: the ste authors. The ste-entry-points view against CPython's
// own parsers: tests/views/entry_points_variants.py (run with
// /usr/bin/python3) writes thousands of site directories with generated
// entry_points.txt files and prints what importlib.metadata (Sectioned)
// and 3.8-3.9's configparser reader give for the group in each. Whenever
// Python's result differs between two variants, their views must differ;
// and for files both parsers read alike ("clean"), equal results must give
// equal views (the view is what Python reads, not a hash of the files).
#include <stdio.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "inventory_test_util.h"
#include "ste/inventory.h"

namespace ste {
namespace {

constexpr int kVariants = 2000;
constexpr int kSeed = 20240611;

struct Variant {
  std::string site;
  bool clean = false;
  std::string modern;  // digest of Python 3.10+'s result
  std::string both;    // digest of (3.10+'s, 3.8-3.9's)
};

std::vector<Variant> RunOracle(const std::string& out_dir, const std::string& group) {
  const std::string command = "/usr/bin/python3 " STE_SOURCE_DIR "/tests/views/entry_points_variants.py '" +
                              out_dir + "' " + std::to_string(kSeed) + " " +
                              std::to_string(kVariants) + " '" + group + "'";
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  std::vector<Variant> out;
  if (pipe == nullptr) return out;
  std::string text;
  char buf[1 << 16];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) text.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << command;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    Variant v;
    std::string clean;
    std::getline(fields, v.site, '\t');
    std::getline(fields, clean, '\t');
    std::getline(fields, v.modern, '\t');
    std::getline(fields, v.both, '\t');
    v.clean = clean == "1";
    out.push_back(v);
  }
  return out;
}

TEST(EntryPointsViewCrossCheck, DiffersWheneverPythonsResultDiffers) {
  test::TempTree tree;
  const std::string group = "pytest11";
  std::vector<Variant> variants = RunOracle(tree.root(), group);
  ASSERT_EQ(variants.size(), static_cast<size_t>(kVariants));
  std::vector<std::string> paths;
  for (const Variant& v : variants) paths.push_back(v.site + "/\x01ste-entry-points:" + group);
  absl::StatusOr<std::vector<InventoryEntry>> views = ComputeViews(tree.root(), paths, GlobSet(), nullptr);
  ASSERT_TRUE(views.ok()) << views.status();
  std::map<std::string, XXH128_hash_t> by_path;
  for (const InventoryEntry& e : *views) by_path[e.path] = e.hash;

  std::map<std::pair<uint64_t, uint64_t>, const Variant*> python_by_view;
  std::map<std::string, std::pair<XXH128_hash_t, const Variant*>> view_by_clean_result;
  size_t clean = 0, shared_clean = 0;
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    const XXH128_hash_t h = by_path.at(paths[i]);
    auto [it, added] = python_by_view.try_emplace({h.low64, h.high64}, &v);
    EXPECT_TRUE(added || it->second->both == v.both)
        << "one view, two Python results: " << it->second->site << " and " << v.site;
    if (!v.clean) continue;
    ++clean;
    auto [c, first] = view_by_clean_result.try_emplace(v.modern, h, &v);
    if (first) continue;
    ++shared_clean;
    EXPECT_TRUE(c->second.first.low64 == h.low64 && c->second.first.high64 == h.high64)
        << "one Python result, two views of clean files: " << c->second.second->site << " and "
        << v.site;
  }
  std::set<std::string> results;
  for (const Variant& v : variants) results.insert(v.both);
  // The oracle is not trivial: many results, and clean files that read alike.
  EXPECT_GT(results.size(), 300u);
  EXPECT_GT(clean, 200u);
  EXPECT_GT(shared_clean, 100u);
  std::printf("%zu variants, %zu distinct Python results, %zu distinct views, %zu clean "
              "(%zu sharing a result)\n",
              variants.size(), results.size(), python_by_view.size(), clean, shared_clean);
}

}  // namespace
}  // namespace ste
