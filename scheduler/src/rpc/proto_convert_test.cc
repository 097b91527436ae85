// FromProto(ToProto(x)) == x for the selection and what travels with it,
// and FromProto refuses what it cannot map exactly.
#include "proto_convert.h"

#include "gtest/gtest.h"

namespace ste {
namespace {

bool Same(const InventoryChange& a, const InventoryChange& b) {
  return a.path == b.path && a.change == b.change && a.type == b.type && a.old_type == b.old_type;
}

TEST(ProtoConvert, EveryChangeRoundTrips) {
  const FileType types[] = {FileType::kRegular, FileType::kSymlink, FileType::kDirectory,
                            FileType::kOther, FileType::kMissing};
  const ChangeKind kinds[] = {ChangeKind::kModified, ChangeKind::kAdded, ChangeKind::kDeleted};
  size_t n = 0;
  for (ChangeKind k : kinds) {
    for (FileType t : types) {
      for (FileType old : types) {
        InventoryChange c{std::string("p/\n\xff") + std::to_string(n++), k, t, old};
        v1::Change m;
        ToProto(c, &m);
        absl::StatusOr<InventoryChange> back = FromProto(m);
        ASSERT_TRUE(back.ok()) << back.status();
        EXPECT_TRUE(Same(c, *back)) << c.path;
      }
    }
  }
  EXPECT_EQ(n, 75u);
}

TEST(ProtoConvert, SelectionRoundTripsWithAndWithoutBaseline) {
  Selection s;
  s.mode = SelectionMode::kSubset;
  s.reason = "2 of 5 tests are affected";
  s.changed = {{"lib/a.py", ChangeKind::kModified, FileType::kMissing, FileType::kRegular},
               {"/usr/lib/x.so", ChangeKind::kModified, FileType::kRegular, FileType::kMissing}};
  s.tests = {{"tests/a.py",
              {SelectionReason::Dependency("lib/a.py", DepKind::kContent, ChangeKind::kDeleted),
               SelectionReason::Rule(SelectionRule::kNewTest)},
              3,
              2.5,
              {}},
             {"tests/b c.py", {}, 0, std::nullopt, {}},
             {"tests/zero.py", {}, 0, 0.0, {}}};
  s.wide = {{SelectionReason::Dependency(".", DepKind::kListing, ChangeKind::kModified), 31,
             {{"NOTES.txt", ChangeKind::kAdded}, {"b c", ChangeKind::kDeleted}}, 4},
            {SelectionReason::Rule(SelectionRule::kOpaque), 2, {}, 0}};
  BaselineInfo info;
  info.id = 7;
  info.mri = 42;
  info.commit = "0123456789abcdef0123456789abcdef01234567";
  info.state = BaselineState::kComplete;
  for (SelectionMode mode : {SelectionMode::kAll, SelectionMode::kSubset, SelectionMode::kNone}) {
    for (bool with_base : {false, true}) {
      s.mode = mode;
      v1::SelectResponse r;
      ToProto(s, with_base ? std::optional<BaselineInfo>(info) : std::nullopt, &r);
      absl::StatusOr<SelectionAnswer> back = FromProto(r);
      ASSERT_TRUE(back.ok()) << back.status();
      const Selection& b = back->selection;
      EXPECT_EQ(b.mode, s.mode);
      EXPECT_EQ(b.reason, s.reason);
      ASSERT_EQ(b.changed.size(), s.changed.size());
      for (size_t i = 0; i < s.changed.size(); i++) EXPECT_TRUE(Same(b.changed[i], s.changed[i]));
      ASSERT_EQ(b.tests.size(), s.tests.size());
      for (size_t i = 0; i < s.tests.size(); i++) {
        EXPECT_EQ(b.tests[i].test, s.tests[i].test);
        EXPECT_EQ(b.tests[i].more_reasons, s.tests[i].more_reasons);
        EXPECT_EQ(b.tests[i].seconds, s.tests[i].seconds);
        ASSERT_EQ(b.tests[i].reasons.size(), s.tests[i].reasons.size());
        for (size_t j = 0; j < s.tests[i].reasons.size(); j++) {
          EXPECT_EQ(b.tests[i].reasons[j], s.tests[i].reasons[j]);
        }
      }
      ASSERT_EQ(b.wide.size(), s.wide.size());
      for (size_t i = 0; i < s.wide.size(); i++) {
        EXPECT_EQ(b.wide[i].cause, s.wide[i].cause);
        EXPECT_EQ(b.wide[i].tests, s.wide[i].tests);
        EXPECT_EQ(b.wide[i].entries, s.wide[i].entries);
        EXPECT_EQ(b.wide[i].more_entries, s.wide[i].more_entries);
      }
      ASSERT_EQ(back->baseline.has_value(), with_base);
      if (with_base) {
        EXPECT_EQ(back->baseline->id, info.id);
        EXPECT_EQ(back->baseline->mri, info.mri);
        EXPECT_EQ(back->baseline->commit, info.commit);
        EXPECT_EQ(back->baseline->state, BaselineState::kComplete);
      }
    }
  }
}

TEST(ProtoConvert, FinishedTestRoundTrips) {
  for (TestOutcome o : {TestOutcome::kPassed, TestOutcome::kFailed, TestOutcome::kError}) {
    FinishedTest f{"tests/t.py", o, 3, 1.5, true, "why", "/w/.ste/output/b1/tests/t.py.log",
                   true, "last\n\xFFlines\n", 12345, "host:1"};
    v1::FinishedTest m;
    ToProto(f, &m);
    absl::StatusOr<FinishedTest> back = FromProto(m);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->test, f.test);
    EXPECT_EQ(back->outcome, f.outcome);
    EXPECT_EQ(back->exit_code, f.exit_code);
    EXPECT_EQ(back->seconds, f.seconds);
    EXPECT_EQ(back->opaque, f.opaque);
    EXPECT_EQ(back->detail, f.detail);
    EXPECT_EQ(back->output_log, f.output_log);
    EXPECT_EQ(back->output_shared, f.output_shared);
    EXPECT_EQ(back->output_tail, f.output_tail);
    EXPECT_EQ(back->output_bytes, f.output_bytes);
    EXPECT_EQ(back->worker_name, f.worker_name);
  }
}

TEST(ProtoConvert, WhatCannotBeMappedIsRefused) {
  v1::SelectResponse r;  // mode unset
  EXPECT_FALSE(FromProto(r).ok());
  r.set_mode(v1::SELECTION_MODE_NONE);
  EXPECT_TRUE(FromProto(r).ok());
  v1::Change* c = r.add_changed();
  c->set_path("a");
  c->set_change("renamed");
  c->set_type("regular");
  EXPECT_FALSE(FromProto(r).ok());
  c->set_change("added");
  c->set_type("fifo");
  EXPECT_FALSE(FromProto(r).ok());
  c->set_type("regular");
  c->set_old_type("pipe");
  EXPECT_FALSE(FromProto(r).ok());
  c->clear_old_type();  // an older sender: the same as type
  absl::StatusOr<SelectionAnswer> ok = FromProto(r);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->selection.changed[0].old_type, FileType::kRegular);
  v1::FinishedTest t;
  EXPECT_FALSE(FromProto(t).ok());  // no outcome
  EXPECT_TRUE(ValidateChangeWord("deleted").ok());
  EXPECT_FALSE(ValidateChangeWord("copied").ok());
}

}  // namespace
}  // namespace ste
