// Copyright: the ste authors.
#include "ste/dependency.h"

#include <gtest/gtest.h>

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash_testing.h"

namespace ste {
namespace {

TEST(DepKindTest, NamesRoundTrip) {
  for (DepKind k : {DepKind::kContent, DepKind::kAbsent, DepKind::kListing}) {
    EXPECT_EQ(ParseDepKind(DepKindName(k)), k);
    EXPECT_TRUE(IsValidDepKind(static_cast<uint8_t>(k)));
  }
  EXPECT_EQ(DepKindName(DepKind::kContent), "content");
  EXPECT_EQ(DepKindName(DepKind::kAbsent), "absent");
  EXPECT_EQ(DepKindName(DepKind::kListing), "listing");
  EXPECT_EQ(ParseDepKind("Content"), std::nullopt);
  EXPECT_EQ(ParseDepKind(""), std::nullopt);
  EXPECT_FALSE(IsValidDepKind(0));
  EXPECT_FALSE(IsValidDepKind(4));
}

TEST(DepKindTest, ValuesArePartOfTheFormat) {
  EXPECT_EQ(static_cast<int>(DepKind::kContent), 1);
  EXPECT_EQ(static_cast<int>(DepKind::kAbsent), 2);
  EXPECT_EQ(static_cast<int>(DepKind::kListing), 3);
}

TEST(DepKeyTest, OrderIsPathBytesThenKind) {
  const DepKey a{"a", DepKind::kListing};
  const DepKey b{"a", DepKind::kContent};
  const DepKey c{"a/b", DepKind::kContent};
  const DepKey high{std::string("\xff"), DepKind::kContent};
  EXPECT_LT(b, a);
  EXPECT_LT(a, c);
  EXPECT_LT(c, high);  // bytes compare unsigned
  EXPECT_EQ(a, (DepKey{"a", DepKind::kListing}));
  EXPECT_NE(a, b);
}

TEST(DepKeyTest, Hashes) {
  EXPECT_TRUE(absl::VerifyTypeImplementsAbslHashCorrectly({
      DepKey{"a", DepKind::kContent},
      DepKey{"a", DepKind::kAbsent},
      DepKey{"", DepKind::kContent},
      DepKey{std::string("x\0y", 3), DepKind::kListing},
  }));
  absl::flat_hash_set<DepKey> set = {{"p", DepKind::kContent},
                                     {"p", DepKind::kAbsent}};
  EXPECT_EQ(set.size(), 2u);
  EXPECT_TRUE(set.contains(DepKey{"p", DepKind::kAbsent}));
}

TEST(DepKeyTest, DebugString) {
  EXPECT_EQ(DepKeyDebugString({"lib/a.rb", DepKind::kAbsent}),
            "absent:lib/a.rb");
}

}  // namespace
}  // namespace ste
