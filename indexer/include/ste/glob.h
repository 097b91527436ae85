// Copyright: the ste authors. Glob patterns over repo-relative paths.
//
// The one glob dialect of ste: `ste.toml` test discovery, inventory
// ignores, run_all / skip_all / mandatory selection globs all use it.
//
// Paths are '/'-separated, already normalized: no "." or ".." segments, no
// empty segments, no trailing '/'. Repo-relative paths have no leading '/'
// (the repo root itself is "."); absolute paths (files outside the repo)
// start with '/'.
//
// Syntax (byte-wise, case-sensitive; '/' is never matched by a wildcard):
//   *        any run of bytes inside one segment (also empty, also a leading
//            '.': unlike a shell, `*` matches dotfiles, like gitignore)
//   ?        exactly one byte that is not '/' (bytes, not UTF-8 characters)
//   [abc]    one byte of the class; ranges `[a-z]`; negation `[!x]` or
//            `[^x]`; a ']' right after '[' / '[!' is a member (`[]x]`);
//            a '-' first or last is a member
//   \c       the byte c literally (escapes *, ?, [, \)
//   **       only as a whole segment: zero or more whole segments.
//            `tests/**/test_*.py` matches `tests/test_a.py` and
//            `tests/x/y/test_a.py`. A trailing `/**` also matches the
//            directory itself: `.git/**` matches `.git` and everything under
//            it (so ignoring `.git/**` removes the `.git` entry too, and a
//            changed listing of `docs` counts as a `docs/**` change).
//            `**` inside a segment (`a**b`) is just two `*`.
//
// Anchoring (gitignore-like, with one simplification):
//   - a pattern with no '/' (`*.md`, `Makefile`) matches the *last segment*
//     of a path at any depth: `*.md` matches `README.md` and `docs/a/b.md`.
//     It does not match the segments above: `build` matches `x/build` but
//     not `x/build/out.o` (the inventory does not descend into an ignored
//     directory, so as an ignore `build` still hides its subtree).
//   - a pattern with a '/' anywhere matches the whole path from the start:
//     `docs/*.md` matches `docs/a.md`, not `x/docs/a.md` (write
//     `**/docs/*.md` for any depth). A leading '/' is not an anchor marker:
//     it is the leading '/' of an absolute path (`/usr/lib/**`).
//
// Rejected as malformed (Glob::Compile / GlobSet::Compile / ValidateGlob):
// an empty pattern, an unclosed '[' class, a trailing '\', an empty segment
// (`a//b`), and a trailing '/' (gitignore's "directories only"; write
// `build/**` for the root's `build`, `**/build/**` for any depth).
//
// Thread-safety: Glob and GlobSet are immutable after Compile; Matches may be
// called from any number of threads.
#ifndef STE_GLOB_H_
#define STE_GLOB_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ste {

// OK if `pattern` is a well-formed glob, else InvalidArgument naming the
// pattern and the problem.
absl::Status ValidateGlob(std::string_view pattern);

// One compiled pattern.
class Glob {
 public:
  static absl::StatusOr<Glob> Compile(std::string_view pattern);

  // True if the whole of `path` matches. Complexity: O(|pattern| * |path|)
  // worst case, usually linear.
  bool Matches(std::string_view path) const;

  const std::string& pattern() const { return pattern_; }

 private:
  friend class GlobSet;
  enum class SegmentKind { kLiteral, kWildcard, kDoubleStar };
  struct Segment {
    SegmentKind kind;
    std::string text;
  };

  Glob() = default;
  // A cheap test on the unsplit path: true if it certainly does not match
  // (a literal first segment or basename differs, a "*.ext" suffix is
  // missing). Lets GlobSet skip splitting most paths.
  bool QuickReject(std::string_view path) const;
  // `segments` are the path's segments ('/'-split).
  bool MatchesSegments(const std::string_view* segments, size_t count) const;

  std::string pattern_;
  bool basename_only_ = false;  // no '/' in the pattern
  std::vector<Segment> segments_;
  // For a basename-only "*<literal>" pattern: the literal.
  std::string star_suffix_;
  bool has_star_suffix_ = false;
  // For "P/**" whose P ends in a literal segment: that literal
  // (GlobSet::MatchesBelowUnmatched).
  std::string subtree_literal_;
  bool has_subtree_literal_ = false;
};

// Matches `path` against `pattern` compiled on the fly. A malformed pattern
// matches nothing (use ValidateGlob or Glob::Compile to see why).
bool GlobMatch(std::string_view pattern, std::string_view path);

// A list of patterns compiled once; a path matches the set if it matches any
// pattern. A default-constructed GlobSet is empty and matches nothing.
class GlobSet {
 public:
  GlobSet() = default;

  // Compiles every pattern; the first malformed one is an InvalidArgument
  // error naming it (and its index).
  static absl::StatusOr<GlobSet> Compile(
      const std::vector<std::string>& patterns);

  bool Matches(std::string_view path) const { return FirstMatch(path) >= 0; }

  // Index (in the Compile list) of the first pattern `path` matches, or -1.
  // For explanations ("selected all: ste.toml matches run_all[0]").
  int FirstMatch(std::string_view path) const;

  // Matches(path) for a walk that tests every directory before it lists
  // it and never descends into a matching one: true only when every
  // ancestor directory of `path` (each prefix ending before a '/') was
  // tested against this set and matched nothing. Then a pattern "P/**"
  // whose P ends in a literal segment L ("**/__pycache__/**") can match
  // only a path whose own last segment is L, which is checked first: most
  // paths are not split at all.
  bool MatchesBelowUnmatched(std::string_view path) const;

  bool empty() const { return globs_.empty(); }
  size_t size() const { return globs_.size(); }
  const Glob& glob(size_t i) const { return globs_[i]; }
  // The patterns, in Compile order.
  std::vector<std::string> patterns() const;

 private:
  std::vector<Glob> globs_;
};

}  // namespace ste

#endif  // STE_GLOB_H_
