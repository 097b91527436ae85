// Copyright: the ste authors.
#include "ste/glob.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

namespace ste {
namespace {

constexpr size_t kNoStar = std::string_view::npos;

using PathSegments = absl::InlinedVector<std::string_view, 24>;

// Debian's abseil is built with its own string_view type (not std's).
absl::string_view AV(std::string_view s) { return {s.data(), s.size()}; }

PathSegments SplitPath(std::string_view path) {
  PathSegments out;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      out.push_back(path.substr(start));
      return out;
    }
    out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

// Parses the class starting at p[*pi] == '[' (the pattern is known to be
// well-formed), says whether byte `c` is a member, and moves *pi past ']'.
bool MatchClass(std::string_view p, size_t* pi, unsigned char c) {
  size_t i = *pi + 1;
  bool negate = false;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    negate = true;
    ++i;
  }
  bool member = false;
  bool first = true;
  while (true) {
    unsigned char lo = static_cast<unsigned char>(p[i]);
    if (lo == ']' && !first) break;
    first = false;
    if (lo == '\\') lo = static_cast<unsigned char>(p[++i]);
    ++i;
    unsigned char hi = lo;
    if (p[i] == '-' && i + 1 < p.size() && p[i + 1] != ']') {
      ++i;
      hi = static_cast<unsigned char>(p[i]);
      if (hi == '\\') hi = static_cast<unsigned char>(p[++i]);
      ++i;
    }
    if (lo <= c && c <= hi) member = true;
  }
  *pi = i + 1;
  return member != negate;
}

// Matches one non-'*' token of `p` at *pi against byte `c`; moves *pi past
// the token.
bool MatchToken(std::string_view p, size_t* pi, unsigned char c) {
  char t = p[*pi];
  switch (t) {
    case '?':
      ++*pi;
      return true;
    case '\\':
      *pi += 2;
      return static_cast<unsigned char>(p[*pi - 1]) == c;
    case '[':
      return MatchClass(p, pi, c);
    default:
      ++*pi;
      return static_cast<unsigned char>(t) == c;
  }
}

// Wildcard match of one segment pattern against one path segment. The
// classic single-backtrack algorithm: on a mismatch, let the last '*'
// swallow one more byte. Correct because '*' matches any run of bytes.
bool WildcardMatch(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0;
  size_t star_pi = kNoStar, star_si = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      while (pi < p.size() && p[pi] == '*') ++pi;
      star_pi = pi;
      star_si = si;
      continue;
    }
    size_t next = pi;
    if (pi < p.size() &&
        MatchToken(p, &next, static_cast<unsigned char>(s[si]))) {
      pi = next;
      ++si;
      continue;
    }
    if (star_pi == kNoStar) return false;
    pi = star_pi;
    si = ++star_si;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

// Checks one segment's syntax; says whether it has any metacharacter.
absl::Status CheckSegment(std::string_view pattern, std::string_view seg,
                          bool* has_meta) {
  *has_meta = false;
  for (size_t i = 0; i < seg.size(); ++i) {
    char c = seg[i];
    if (c == '*' || c == '?') {
      *has_meta = true;
    } else if (c == '\\') {
      *has_meta = true;
      if (i + 1 >= seg.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("glob \"", AV(pattern),
                         "\": '\\' at the end of a segment escapes nothing"));
      }
      ++i;
    } else if (c == '[') {
      *has_meta = true;
      size_t j = i + 1;
      if (j < seg.size() && (seg[j] == '!' || seg[j] == '^')) ++j;
      bool first = true;
      bool closed = false;
      for (; j < seg.size(); ++j) {
        if (seg[j] == ']' && !first) {
          closed = true;
          break;
        }
        first = false;
        if (seg[j] == '\\') {
          if (j + 1 >= seg.size()) break;
          ++j;
        }
      }
      if (!closed) {
        return absl::InvalidArgumentError(absl::StrCat(
            "glob \"", AV(pattern), "\": unclosed '[' at segment \"", AV(seg),
            "\" (a class cannot contain '/')"));
      }
      i = j;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateGlob(std::string_view pattern) {
  return Glob::Compile(pattern).status();
}

absl::StatusOr<Glob> Glob::Compile(std::string_view pattern) {
  if (pattern.empty()) {
    return absl::InvalidArgumentError("glob: empty pattern");
  }
  if (pattern.back() == '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "glob \"", AV(pattern),
        "\": a trailing '/' is not supported; write \"dir/**\" for the root's "
        "dir or \"**/dir/**\" for any depth"));
  }
  Glob glob;
  glob.pattern_ = std::string(pattern);
  glob.basename_only_ = pattern.find('/') == std::string_view::npos;
  PathSegments segs = SplitPath(pattern);
  for (size_t i = 0; i < segs.size(); ++i) {
    std::string_view seg = segs[i];
    if (seg.empty() && i != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("glob \"", AV(pattern), "\": empty segment ('//')"));
    }
    Segment out;
    out.text = std::string(seg);
    bool has_meta = false;
    absl::Status status = CheckSegment(pattern, seg, &has_meta);
    if (!status.ok()) return status;
    if (seg == "**") {
      // Consecutive "**" segments are one.
      if (!glob.segments_.empty() &&
          glob.segments_.back().kind == SegmentKind::kDoubleStar) {
        continue;
      }
      out.kind = SegmentKind::kDoubleStar;
    } else {
      out.kind = has_meta ? SegmentKind::kWildcard : SegmentKind::kLiteral;
    }
    glob.segments_.push_back(std::move(out));
  }
  if (glob.basename_only_) {
    const std::string& text = glob.segments_[0].text;
    if (text.size() > 1 && text[0] == '*' &&
        text.find_first_of("*?[\\", 1) == std::string::npos) {
      glob.star_suffix_ = text.substr(1);
      glob.has_star_suffix_ = true;
    }
  }
  const size_t m = glob.segments_.size();
  if (!glob.basename_only_ && m >= 2 && glob.segments_[m - 1].kind == SegmentKind::kDoubleStar &&
      glob.segments_[m - 2].kind == SegmentKind::kLiteral) {
    glob.subtree_literal_ = glob.segments_[m - 2].text;
    glob.has_subtree_literal_ = true;
  }
  return glob;
}

bool Glob::QuickReject(std::string_view path) const {
  const Segment& first = segments_[0];
  if (basename_only_) {
    size_t slash = path.rfind('/');
    std::string_view base =
        slash == std::string_view::npos ? path : path.substr(slash + 1);
    if (first.kind == SegmentKind::kLiteral) return base != first.text;
    if (has_star_suffix_) {
      return base.size() < star_suffix_.size() ||
             base.substr(base.size() - star_suffix_.size()) != star_suffix_;
    }
    return false;
  }
  if (first.kind != SegmentKind::kLiteral) return false;
  const std::string& text = first.text;
  return path.size() < text.size() || path.compare(0, text.size(), text) != 0 ||
         (path.size() > text.size() && path[text.size()] != '/');
}

bool Glob::MatchesSegments(const std::string_view* segs, size_t n) const {
  auto match_one = [](const Segment& p, std::string_view s) {
    switch (p.kind) {
      case SegmentKind::kLiteral:
        return p.text == s;
      case SegmentKind::kWildcard:
        return WildcardMatch(p.text, s);
      case SegmentKind::kDoubleStar:
        return true;
    }
    return false;
  };
  if (basename_only_) return match_one(segments_[0], segs[n - 1]);

  // Same single-backtrack algorithm as WildcardMatch, one level up: "**" is
  // the star, a segment pattern is a token that matches one path segment.
  const size_t m = segments_.size();
  size_t pi = 0, si = 0;
  size_t star_pi = kNoStar, star_si = 0;
  while (si < n) {
    if (pi < m && segments_[pi].kind == SegmentKind::kDoubleStar) {
      ++pi;
      star_pi = pi;
      star_si = si;
      continue;
    }
    if (pi < m && match_one(segments_[pi], segs[si])) {
      ++pi;
      ++si;
      continue;
    }
    if (star_pi == kNoStar) return false;
    pi = star_pi;
    si = ++star_si;
  }
  while (pi < m && segments_[pi].kind == SegmentKind::kDoubleStar) ++pi;
  return pi == m;
}

bool Glob::Matches(std::string_view path) const {
  if (QuickReject(path)) return false;
  PathSegments segs = SplitPath(path);
  return MatchesSegments(segs.data(), segs.size());
}

bool GlobMatch(std::string_view pattern, std::string_view path) {
  absl::StatusOr<Glob> glob = Glob::Compile(pattern);
  return glob.ok() && glob->Matches(path);
}

std::vector<std::string> GlobSet::patterns() const {
  std::vector<std::string> out;
  for (const Glob& g : globs_) out.push_back(g.pattern());
  return out;
}

absl::StatusOr<GlobSet> GlobSet::Compile(
    const std::vector<std::string>& patterns) {
  GlobSet set;
  set.globs_.reserve(patterns.size());
  for (size_t i = 0; i < patterns.size(); ++i) {
    absl::StatusOr<Glob> glob = Glob::Compile(patterns[i]);
    if (!glob.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pattern ", i, ": ", glob.status().message()));
    }
    set.globs_.push_back(*std::move(glob));
  }
  return set;
}

bool GlobSet::MatchesBelowUnmatched(std::string_view path) const {
  PathSegments segs;
  bool split = false;
  const std::string_view base = path.substr(path.rfind('/') + 1);  // npos + 1 == 0
  for (const Glob& glob : globs_) {
    // "P/**" matches `path` only through a prefix P matches; every prefix
    // but `path` itself is an ancestor that matched nothing, so P must
    // match `path`, whose last segment must then be P's last, a literal.
    if (glob.has_subtree_literal_ && base != glob.subtree_literal_) continue;
    if (glob.QuickReject(path)) continue;
    if (!split) {
      segs = SplitPath(path);
      split = true;
    }
    if (glob.MatchesSegments(segs.data(), segs.size())) return true;
  }
  return false;
}

int GlobSet::FirstMatch(std::string_view path) const {
  PathSegments segs;
  bool split = false;
  for (size_t i = 0; i < globs_.size(); ++i) {
    if (globs_[i].QuickReject(path)) continue;
    if (!split) {
      segs = SplitPath(path);
      split = true;
    }
    if (globs_[i].MatchesSegments(segs.data(), segs.size())) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace ste
