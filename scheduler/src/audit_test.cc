// AuditSample (audit.h): the seeded choice of the left-out tests to run.
// RunAudit itself runs real tests: tests/e2e/audit_e2e_test.cc.
#include "ste/audit.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ste {
namespace {

std::vector<std::string> Tests(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; i++) out.push_back("tests/t" + std::to_string(1000 + i) + ".sh");
  return out;
}

TEST(AuditSample, AllByDefaultEachOnce) {
  std::vector<std::string> left = Tests(30);
  left.push_back(left[3]);  // a duplicate counts once
  AuditOptions o;
  std::vector<std::string> sample = AuditSample(left, o);
  EXPECT_EQ(sample.size(), 30u);
  EXPECT_EQ(std::set<std::string>(sample.begin(), sample.end()).size(), 30u);
}

TEST(AuditSample, ASampleOrAFractionRoundedUp) {
  AuditOptions o;
  o.sample = 7;
  EXPECT_EQ(AuditSample(Tests(30), o).size(), 7u);
  o.sample = 70;
  EXPECT_EQ(AuditSample(Tests(30), o).size(), 30u) << "never more than are left out";
  o.sample = 0;
  o.fraction = 0.1;
  EXPECT_EQ(AuditSample(Tests(31), o).size(), 4u) << "3.1 rounded up";
  o.fraction = 1;
  EXPECT_EQ(AuditSample(Tests(31), o).size(), 31u);
  EXPECT_TRUE(AuditSample({}, o).empty());
}

TEST(AuditSample, TheSameSeedTheSameTestsWhateverTheOrderGiven) {
  AuditOptions o;
  o.sample = 5;
  o.seed = 42;
  std::vector<std::string> left = Tests(50);
  std::vector<std::string> reversed(left.rbegin(), left.rend());
  std::vector<std::string> a = AuditSample(left, o);
  EXPECT_EQ(a, AuditSample(reversed, o));
  // Fixed on every machine: SplitMix64 and a Fisher-Yates, no std::shuffle
  // (the same five computed apart, by the same algorithm in Python).
  EXPECT_EQ(a, (std::vector<std::string>{"tests/t1013.sh", "tests/t1048.sh", "tests/t1020.sh",
                                         "tests/t1021.sh", "tests/t1022.sh"}));
  o.seed = 43;
  EXPECT_NE(a, AuditSample(left, o));
  for (const std::string& t : a) EXPECT_NE(std::find(left.begin(), left.end(), t), left.end());
}

}  // namespace
}  // namespace ste

namespace ste {
namespace {

TEST(MissRateUpperBound, TheExactBinomialBound) {
  // No miss: 1 - alpha^(1/n) exactly (the "rule of three" is its approximation).
  EXPECT_NEAR(MissRateUpperBound(0, 60, 0.95), 1 - std::pow(0.05, 1.0 / 60), 1e-9);
  EXPECT_NEAR(MissRateUpperBound(0, 60, 0.95), 0.0487, 1e-4);
  // One miss in 20: the Clopper-Pearson one-sided 95% bound, 0.2161.
  EXPECT_NEAR(MissRateUpperBound(1, 20, 0.95), 0.2161, 1e-4);
  EXPECT_EQ(MissRateUpperBound(0, 0, 0.95), 1.0);
  EXPECT_EQ(MissRateUpperBound(5, 5, 0.95), 1.0);
  EXPECT_LT(MissRateUpperBound(0, 100000, 0.95), 0.0001);
}

}  // namespace
}  // namespace ste
