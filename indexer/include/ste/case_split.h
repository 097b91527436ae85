// Test cases as a unit of selection (`[tests] unit = "case"`,
// docs/concepts.md "Test cases"): which of a test file's dependencies are
// one case's own, and how a case scope's name reads back as the case.
//
// A batch runner with case scopes on pushes "//r/<file>/<case>" around each
// case (integrations/README.md, "Case scope names"). Case scopes are
// attribution, not isolation: a module imported by one case is cached for
// the next, a wider fixture set up once serves them all. So only what the
// definition tracker records afresh in each case scope can be a case's
// own: the definitions that ran there (their text "F/\x01ste-def:<unit>"
// and place "F/\x01ste-at:<unit>" views), when every tracked process that
// recorded there made the tracker's `scope` marker
// (TestDependencies::unsplit_scopes). Everything else
// recorded in a case scope is the file's shared part, as is what its own
// scope and the scopes above it hold.
//
// Nor does a case see only what it records: a cache an earlier case filled
// (an lru_cache'd helper run in A, only looked up in B), a global it set.
// So the cases' run order is kept too (TestDependencies::case_order), and
// a change to what case A owns selects A and every case that ran after it
// in the same run (selection.cc); without a known order, no case at all.
//
// A GoogleTest case (runner.kind = "ctest", the listener of
// integrations/gtest/) has no definition tracker: its code is the
// binary, which the process loaded before any case (the file's shared
// part). What it can own is what it read: the interceptor records each
// path once per scope, so a case's reads are all there (reads_own). A
// file read in an earlier case and kept in memory is the run-order rule's
// business, as a cache is; a file the file's scope read too is shared.
#ifndef STE_CASE_SPLIT_H_
#define STE_CASE_SPLIT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ste/dependency.h"
#include "ste/log_reduction.h"

namespace ste {

// Can `key` be a case's own dependency: a content dependency on a unit's
// text or place view ("F/\x01ste-def:<unit>", "F/\x01ste-at:<unit>")?
bool IsCaseOwnKind(const DepKey& key);

// Rewrites *deps, the share of `test` (a batch's test file, or a ctest
// test) of a run whose whole reduction is `all`: each scope one level
// beneath the test's ("//r/<test>/<case>") keeps only its IsCaseOwnKind
// keys (and, with `reads_own`, its content keys of plain files: what the
// case read), and none when it is one of all.unsplit_scopes; what it loses, and every scope deeper
// down, goes to the test's own scope (added if missing). A case scope left
// with no key is dropped. Sets deps->case_order: the test's case scopes
// that all.scope_entries has, by the n of their first entry, when one
// process (pid) entered them all and every case scope of *deps is among
// them; otherwise empty. File-level selection is unchanged by it: scopes
// beneath a test roll up to it.
void SplitCaseScopes(const TestDependencies& all, const std::string& test, TestDependencies* deps,
                     bool reads_own = false);

// The case a case scope name stands for (the rule of integrations/README.md
// reversed: each %XX back to its byte), or none when it cannot be told: the
// long form ("%~" and a hash), the empty name ("%"), a malformed escape.
std::optional<std::string> CaseOfScopeName(std::string_view name);

}  // namespace ste

#endif  // STE_CASE_SPLIT_H_
