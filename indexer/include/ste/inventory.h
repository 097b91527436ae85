// Copyright: the ste authors. The inventory: every file under a root, hashed.
//
// An Inventory is a list of entries sorted by path (plain byte order,
// std::string's operator<), one per file, symlink, directory or other node
// under the root (minus ignored paths), plus the requested external paths.
// It is taken *before* tests run; diffing two inventories gives the changed
// paths that selection looks up in the index.
//
// Paths
//   - Under the root: repo-relative, '/'-separated, no leading "./", no
//     trailing '/'. The root directory itself is the entry "." (kRootPath).
//   - External paths (files outside the repo that tests read): absolute, as
//     given in ScanOptions::external_paths ("/usr/lib/python3/x.py").
//
// Hashes (XXH3-128, xxHash's XXH3_128bits with the default seed)
//   kRegular    the file's content. The canonical (big-endian) hex of this
//               hash is what `xxhsum -H2` / `xxh128sum` prints.
//   kSymlink    of: the link target string, one '\0', then one tag byte and
//               what the link resolves to (followed fully):
//               'R' + the 16 canonical bytes of the content hash (a regular
//               file), 'D' (a directory), 'O' (anything else), 'N' (dangling
//               or unresolvable). So retargeting a link and editing the file
//               it points to both change the link's hash.
//   kDirectory  the "names-hash": of the sorted (byte order) names of its
//               entries, each followed by '\0'; ignored entries are left
//               out. It changes when an entry is added, removed or renamed,
//               not when an entry's content changes (what a `listing`
//               dependency reacts to). Empty directory: hash of no bytes.
//   kOther, kMissing  zero; except an external path this process cannot
//               look at (lstat, reading it or listing it fails other than
//               by its absence: permission denied on a folder above it, a
//               file only root may read): kOther with all stat fields zero
//               and the hash of "ste: cannot be looked at: " + the error's
//               absl::StatusCode name. The test's process met the same
//               wall; the path becoming readable, or failing another way,
//               is a change.
//
// Stat fields are lstat(2)'s: a symlink entry describes the link itself.
// A kMissing entry (an external path that does not exist) has all zeros.
//
// Stat cache. Scan(options, previous) reuses previous's hash of a regular
// file without reading it when path, type, size, mtime_ns, ctime_ns, inode
// and dev are all unchanged AND the file's mtime is strictly older than
// previous.taken_at_ns() (git's racy-timestamp rule: a file modified in the
// same timestamp tick as the previous scan may have changed after it was
// read, so it is re-hashed). taken_at_ns is the coarse realtime clock (the
// one the kernel stamps files with) at the start of the scan, rounded down
// to a whole second so that filesystems with 1 s timestamps are safe too.
// Directory names-hashes are always computed from the readdir the walk does
// anyway; symlinks are always re-resolved (readlink + stat), taking the
// content hash of a target inside the inventory from this scan. So a warm
// re-inventory of an unchanged tree costs one lstat per entry plus one
// readdir per directory.
//
// Errors. Scan never returns a wrong hash silently:
//   - a file whose stat changes while it is read (size, mtime, ctime, inode)
//     or whose byte count differs from its size is re-read, up to 3 times,
//     then the scan fails with Aborted naming the path;
//   - a directory whose entry vanishes between readdir and lstat is
//     re-listed, up to 3 times, then Aborted;
//   - a file or directory that vanishes after the walk saw it: Aborted
//     naming the path ("vanished during the scan");
//   - any other open/read/readdir/stat error (EIO, EACCES, …): that error,
//     naming the path.
// Nothing is retried beyond that: callers widen the selection to "all" on
// any error, and may simply scan again.
//
// Views
//   A path whose last component starts with the byte 0x01 is a *view
//   path*: "<dir>/\x01<view>", <dir> repo-relative ("src/\x01ste-dists")
//   or absolute ("/usr/lib/python3/dist-packages/\x01ste-pth"), and
//   "\x01<view>" alone for the root (what RepoRelative gives for
//   "<root>/\x01<view>"). It names a *view* of directory <dir>: a function
//   of its listing (and, for entry points, of files in it) that says
//   exactly what one piece of CPython's stdlib (3.6 to 3.13) looks at there,
//   so that a test can depend on that instead of on the whole listing
//   (docs/concepts.md, "Views"). A process records one by stat'ing
//   "<abs dir>/\x01<view>", which never exists (an `absent` record);
//   ReduceLogs turns it into a `content` dependency on the view path.
//
//   The known views (<name> and <group> non-empty, without '/' or NUL);
//   "names" are <dir>'s entries, minus inventory.ignore for a repo <dir>
//   (an ignored path is invisible, as in a names-hash):
//     ste-pth                 site.py's addsitedir: the names that end
//                             with ".pth" (dot-names included: 3.6-3.12
//                             read them, 3.13 skips them; wider).
//     ste-dists               importlib.metadata's Lookup (and 3.8-3.9's
//                             FastPath.search with no name): the names
//                             whose lowercase ends with ".dist-info" or
//                             ".egg-info", plus a name whose lowercase is
//                             "egg-info" when <dir>'s basename lowercased
//                             ends with ".egg" (for the root: the basename
//                             of the absolute root).
//     ste-dists:<name>        a by-name lookup (importlib.metadata.version,
//                             distribution): the ste-dists names whose
//                             distribution name, normalized, is
//                             Normalize(<name>); a name's distribution name
//                             is low.rpartition(".")[0].partition("-")[0]
//                             (low: the name lowercased), for "egg-info"
//                             the same of <dir>'s basename; Normalize is
//                             Prepared.normalize: runs of [-_.] become "_",
//                             lowercase. A name with a non-ASCII byte
//                             always matches (Python lowercases Unicode;
//                             wider). A superset of what 3.8-3.13 match.
//     ste-entry-points:<group>  pluggy/pytest loading plugins (for dist in
//                             distributions(): for ep in dist.entry_points:
//                             if ep.group == group): per ste-dists name N,
//                             what "<dir>/N/entry_points.txt" gives:
//                               - nothing when it is missing or unreadable
//                                 the ways Distribution.read_text suppresses
//                                 (ENOENT, ENOTDIR, a directory, EACCES,
//                                 EPERM), or when it is clean (below) and
//                                 has no [<group>] pair;
//                               - N and its [<group>] pairs in file order
//                                 (name, value), as Sectioned and
//                                 EntryPoints._from_text give them, when it
//                                 is clean;
//                               - N and the XXH3-128 of the whole file when
//                                 it is not clean;
//                               - N and a mark when it is neither a regular
//                                 file nor a directory (a fifo, a socket).
//                             Clean: Python 3.10+ (Sectioned) and 3.8-3.9
//                             (configparser, delimiters "=") read it alike.
//                             It is not when it has a non-ASCII byte, a
//                             \v, \f, \x1c, \x1d or \x1e (line breaks
//                             to str.splitlines only) or a '%' (configparser
//                             interpolates), or a line (split at \n, \r\n,
//                             \r; stripped as str.strip; not empty and not
//                             starting with '#') that comes before the first
//                             section (configparser raises), or whose raw
//                             text starts with whitespace (a configparser
//                             continuation), or that starts with '[' and is
//                             not "[x]" with x non-empty and neither
//                             starting with '[' nor ending with ']' (the
//                             parsers name such sections differently; "[x]"
//                             starts section x, unstripped), or that starts
//                             section "DEFAULT" (configparser merges it
//                             into every section) or one seen before, or a
//                             pair line (any other) with no '=' or an empty
//                             or repeated name (text before the first '=',
//                             stripped) in its section (Python raises). So
//                             a package whose entry points are only
//                             [console_scripts]
//                             leaves ste-entry-points:pytest11 unchanged,
//                             and a new plugin, a changed one or a file
//                             Python may fail on changes it.
//     ste-def, ste-def:<name>  of a source *file* <dir>: its module-level
//                             code, and one definition in it (definitions.h,
//                             docs/concepts.md "Definitions"). Not computed
//                             by ComputeViews (InvalidArgument): their values
//                             are fingerprints, made by
//                             integrations/python/ste_fingerprint.py.
//     ste-pytest-ini          of a *file* <dir> named pyproject.toml
//                             ("pyproject.toml/\x01ste-pytest-ini"): what
//                             pytest's config discovery takes from it
//                             (_pytest/config/findpaths.py, load_config_
//                             dict_from_file: tomllib.loads of the file,
//                             then ["tool"]["pytest"]["ini_options"]). Its
//                             value: that table as JSON (toml++'s
//                             json_formatter; keys sorted) when the file
//                             parses as TOML and has it; a mark when it
//                             parses without one; a mark and the XXH3-128
//                             of the whole file when it does not parse
//                             (pytest fails on it: any change counts).
//                             kMissing when <dir> is missing or no regular
//                             file. So a version, a dependency or another
//                             tool's table edited leaves it as it was.
//                             Recorded by ste's Python startup hook around
//                             pytest's read (ste_names.py); ReduceLogs then
//                             drops that process's `content` record of the
//                             file itself, unless the process also stat'ed
//                             "<file>/\x01ste-file-read": its Python code
//                             opened the file other than in pytest's read
//                             (that marker is never a dependency).
//     ste-env:<escaped name>  of "/" only ("/\x01ste-env:HOME"): an
//                             environment variable (environment.h): not a
//                             function of a directory but of the
//                             environment the view is computed in
//                             (ScanOptions::environment). Its value is the
//                             variable's name, '\0', and its value's bytes;
//                             kMissing when it is unset. Never subject to
//                             inventory.external (a variable is not a file
//                             outside the repo).
//   Any other view name is unknown: ReduceLogs records a `listing` of
//   <dir> instead, and a scan asked for one fails (InvalidArgument).
//
//   Entry. A view path is requested (ScanOptions::view_paths, ComputeViews),
//   never found by the walk; a real file or directory whose name is a known
//   view ("\x01ste-dists") is reserved: the walk makes no entry for it,
//   though it counts in its directory's names-hash. The entry of a view:
//     kRegular, every stat field zero (only the value can differ), hash =
//               XXH3-128 of the view's value: its name (for
//               ste-dists:<name>, with <name> normalized), '\0', then
//               for a names view each matching name followed by '\0' in
//               byte order; for ste-entry-points, per contributing name in
//               byte order: u64 length + bytes of the name, one tag byte
//               'P' (u64 count, then per pair u64 length + bytes of its
//               name and of its value), 'H' (16 canonical hash bytes) or
//               'O' (a mark). u64s little-endian.
//     kMissing  <dir> does not exist, is not a directory after following
//               symlinks (as os.listdir), or cannot be listed (EACCES: the
//               stdlib then sees no names either).
//   Other errors (EIO, ELOOP, a file that keeps changing while read) fail
//   the scan: callers select all.
//
// On-disk format, version 1 (all integers little-endian):
//
//   offset  size        field
//   0       8           magic "STEINV\0\0" (7 bytes "STEINV\0" + 1 zero pad)
//   8       4           format version (u32) = 1
//   12      4           flags (u32) = 0, reserved
//   16      8           entry_count (u64)
//   24      8           path_bytes (u64): size of the path table
//   32      8           taken_at_ns (i64)
//   40      8           reserved (u64) = 0
//   48      80*N        records, one per entry, in path order:
//             +0   u64  path_offset into the path table
//             +8   u32  path_length (> 0)
//             +12  u8   type (1 regular, 2 symlink, 3 directory, 4 other,
//                       5 missing)
//             +13  3    zero
//             +16  u64  size
//             +24  i64  mtime_ns
//             +32  i64  ctime_ns
//             +40  u64  inode
//             +48  u64  dev
//             +56  u32  mode (st_mode)
//             +60  u32  zero
//             +64  u64  hash.low64
//             +72  u64  hash.high64
//   48+80N  path_bytes  path table (the paths' bytes, no separators)
//   end-8   8           checksum (u64): XXH3_64bits of every byte before it
//
// Parse rejects with DataLoss, each with a message saying which: a wrong
// magic, another version, truncation or trailing bytes, a bad checksum, a
// nonzero reserved field, a path out of the path table, an unknown type, a
// path with a NUL byte, paths not strictly increasing. Sizes are checked
// before the checksum, so a truncated file says "truncated".
//
// Thread-safety: an Inventory is immutable once built; const methods may be
// called from any number of threads. Scan uses its own threads internally.
#ifndef STE_INVENTORY_H_
#define STE_INVENTORY_H_

#include <xxhash.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ste/environment.h"
#include "ste/glob.h"

namespace ste {

// The path of the root directory's own entry.
inline constexpr std::string_view kRootPath = ".";

enum class FileType : uint8_t {
  kRegular = 1,
  kSymlink = 2,
  kDirectory = 3,
  kOther = 4,    // fifo, socket, device; an external path not looked at
  kMissing = 5,  // an external path that does not exist
};

// "regular", "symlink", "directory", "other", "missing".
std::string_view FileTypeName(FileType type);

// 96 bytes (type and mode share a word); an inventory of 200k files holds
// about 19 MB of these plus the paths.
struct InventoryEntry {
  std::string path;
  FileType type = FileType::kMissing;
  uint32_t mode = 0;  // st_mode: type and permission bits
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t inode = 0;
  uint64_t dev = 0;
  XXH128_hash_t hash = {0, 0};
};

bool operator==(const InventoryEntry& a, const InventoryEntry& b);
inline bool operator!=(const InventoryEntry& a, const InventoryEntry& b) {
  return !(a == b);
}

// 32 lowercase hex digits, canonical (big-endian) order, as xxh128sum prints.
std::string HashToHex(XXH128_hash_t hash);

// What the stat cache and the hashing did; not serialized.
struct ScanStats {
  uint64_t entries = 0;
  uint64_t directories = 0;
  uint64_t files_hashed = 0;  // regular files read (cold or cache miss)
  uint64_t files_reused = 0;  // regular files whose hash came from previous
  uint64_t bytes_hashed = 0;
  uint64_t symlinks = 0;
  uint64_t retries = 0;   // files re-read / directories re-listed
  int64_t walk_ns = 0;    // readdir, lstat, stat cache, small files hashed
  int64_t hash_ns = 0;    // files over 256 KiB, hashed after the walk
  int64_t finish_ns = 0;  // symlinks, output in path order
};

// The operating-system calls Scan makes, behind a narrow seam so that tests
// can inject faults (docs/concepts.md, "Practices"). All paths are absolute; names are
// single path segments. Implementations must be thread-safe (a Directory or
// ReadableFile is used by one thread at a time).
struct FileStat {
  FileType type = FileType::kOther;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t inode = 0;
  uint64_t dev = 0;
  uint32_t mode = 0;
};

class ReadableFile {
 public:
  virtual ~ReadableFile() = default;
  // Reads up to `n` bytes; 0 means end of file.
  virtual absl::StatusOr<size_t> Read(char* buf, size_t n) = 0;
  // fstat(2) of the open file.
  virtual absl::StatusOr<FileStat> Stat() = 0;
};

// An open directory: its listing, and calls on its entries relative to it
// (fstatat/openat: one path-component lookup instead of a whole path walk,
// which is most of the cost of a warm scan).
class Directory {
 public:
  virtual ~Directory() = default;
  // The names in the directory, without "." and "..", in no particular
  // order, read from the start on every call.
  virtual absl::Status List(std::vector<std::string>* names) = 0;
  // lstat(2) of an entry. NotFound if it does not exist.
  virtual absl::StatusOr<FileStat> LinkStatAt(const std::string& name) = 0;
  // Opens an entry for reading; a symlink is an error (not followed).
  virtual absl::StatusOr<std::unique_ptr<ReadableFile>> OpenAt(
      const std::string& name) = 0;
  // Opens a subdirectory (not through a symlink). NotFound if it is gone.
  virtual absl::StatusOr<std::unique_ptr<Directory>> OpenSubdirectory(
      const std::string& name) = 0;
};

class ScanFileSystem {
 public:
  virtual ~ScanFileSystem() = default;
  // lstat(2). NotFound if the path does not exist (ENOENT, ENOTDIR).
  virtual absl::StatusOr<FileStat> LinkStat(const std::string& path) = 0;
  // stat(2) (follows symlinks). NotFound as above, also for a dangling or
  // looping link.
  virtual absl::StatusOr<FileStat> FollowStat(const std::string& path) = 0;
  // Opens a directory; with follow == false a final symlink is an error.
  virtual absl::StatusOr<std::unique_ptr<Directory>> OpenDirectory(
      const std::string& path, bool follow) = 0;
  virtual absl::StatusOr<std::string> ReadLink(const std::string& path) = 0;
  // Opens for reading. With follow == false a final symlink is an error.
  virtual absl::StatusOr<std::unique_ptr<ReadableFile>> Open(
      const std::string& path, bool follow) = 0;
};

// The real file system (POSIX calls). Never null; lives forever.
ScanFileSystem* RealScanFileSystem();

struct ScanOptions {
  // Absolute path of the directory to inventory; a trailing '/' is ignored.
  // Symlinks are not followed during the walk.
  std::string root;
  // Matched on repo-relative paths; an ignored directory is not descended and
  // ignored names are left out of their directory's names-hash. Never
  // applied to the root itself nor to external paths.
  GlobSet ignore;
  // Absolute, normalized paths (no "." / ".." / empty segments) outside the
  // root to inventory as well, each as one entry (a directory: its
  // names-hash, not descended). A path that does not exist becomes a
  // kMissing entry, so that its later appearance is a change. Duplicates are
  // allowed and collapse.
  std::vector<std::string> external_paths;
  // A view path among external_paths is computed as if in view_paths.
  // View paths (see "Views" above) to compute as well, each as one entry:
  // repo-relative ones against `root` (inventory.ignore applies to the
  // names they see), absolute ones normalized (ignore does not apply).
  // InvalidArgument for a path that is not a known view. Duplicates
  // collapse.
  std::vector<std::string> view_paths;
  // The environment the ste-env views are computed in; null = this
  // process's own (Environment::OfProcess). Not owned.
  const Environment* environment = nullptr;
  // Worker threads for the walk and for hashing; 0 = hardware concurrency.
  int threads = 0;
  // The file system to use; null = RealScanFileSystem(). Not owned.
  ScanFileSystem* fs = nullptr;
};

enum class ChangeKind : uint8_t { kModified, kAdded, kDeleted };

// "modified", "added", "deleted".
std::string_view ChangeKindName(ChangeKind kind);

struct InventoryChange {
  std::string path;
  ChangeKind change = ChangeKind::kModified;
  FileType type = FileType::kRegular;      // head's type; base's if deleted
  FileType old_type = FileType::kRegular;  // base's type; kMissing if added
};

struct InventoryDiff {
  std::vector<InventoryChange> changes;  // sorted by path

  // One JSON object per line per change: {"path", ["path_hex",] "change",
  // "type", "old_type"}; see Inventory::ToJsonLines for path escaping.
  std::string ToJsonLines() const;
};

// ---- Views (see "Views" at the top of this file) ----

// The byte that starts the last component of a view path.
inline constexpr char kViewMark = '\x01';

// True iff the last component of `path` starts with kViewMark: a view
// path, of a known view or not.
bool IsViewPath(std::string_view path);

enum class ViewKind : uint8_t { kPth, kDists, kDistsNamed, kEntryPoints, kDefinition, kEnv, kPytestIni };

// Which part of a source file a kDefinition view is (definitions.h,
// "Views"): "ste-def", "ste-def:<unit>", "ste-at:<unit>", "ste-doc:<name>",
// "ste-const:<name>", "ste-sig:<name>", "ste-names", "ste-absent:<name>",
// "ste-import:<name>".
enum class DefinitionPart : uint8_t { kModule, kUnit, kPlace, kDoc, kConst, kSig, kNames, kAbsent, kImport };

// A view path of a known view, parsed.
struct View {
  std::string dir;   // ".", "src", "/usr/lib/python3/dist-packages"
  std::string name;  // after the mark: "ste-dists:foo_bar"
  ViewKind kind = ViewKind::kPth;
  // kDistsNamed: the name as given, normalized (NormalizeDistName);
  // kEntryPoints: the group; kDefinition: the definition's name, "" for
  // the module-level code (then `dir` is the source file); kEnv: the
  // variable's name, unescaped; "" otherwise.
  std::string arg;
  DefinitionPart part = DefinitionPart::kModule;  // kDefinition only
};

// The view `path` names; nullopt when `path` is not a view path or names
// an unknown view.
std::optional<View> ParseView(std::string_view path);

// True iff `component` (a path's last component) is the mark followed by a
// known view's name: what the walk reserves.
bool IsKnownViewComponent(std::string_view component);

// importlib.metadata's Prepared.normalize for ASCII: runs of '-', '_', '.'
// become one '_', ASCII letters are lowercased, other bytes are kept.
std::string NormalizeDistName(std::string_view name);

// True iff `view` looks at the entry `name` of its directory, whose own
// basename is `dir_basename` (the .egg case).
bool ViewWatches(const View& view, std::string_view dir_basename,
                 std::string_view name);

// What a view is, for a user: "the *.pth names", "the *.dist-info and
// *.egg-info names", "the distributions named foo_bar", "entry points
// [pytest11] of its distributions".
std::string DescribeView(const View& view);

// The entries of `view_paths` (see ScanOptions::view_paths; `root` is the
// absolute, normalized repo root the repo-relative ones are under), sorted
// by path, duplicates collapsed. `fs` null = RealScanFileSystem();
// `environment` null = this process's (the ste-env views). Errors:
// InvalidArgument for a path that is not a known view, or see "Views"
// above.
absl::StatusOr<std::vector<InventoryEntry>> ComputeViews(
    const std::string& root, const std::vector<std::string>& view_paths,
    const GlobSet& ignore, ScanFileSystem* fs, const Environment* environment = nullptr);

class Inventory {
 public:
  Inventory() = default;  // empty, taken_at_ns 0

  // Walks options.root (and options.external_paths, and computes
  // options.view_paths), hashing in parallel.
  // `previous`, if not null, is a stat cache (see the top of this file); it
  // may come from another machine or root: only matching stats are reused.
  // Errors: InvalidArgument for a bad root or external path, or see
  // "Errors" above.
  static absl::StatusOr<Inventory> Scan(const ScanOptions& options,
                                        const Inventory* previous);

  // Builds an inventory from entries in any order (for tests and tools).
  // InvalidArgument on an empty or duplicate path or one with a NUL byte.
  static absl::StatusOr<Inventory> FromEntries(
      std::vector<InventoryEntry> entries, int64_t taken_at_ns);

  // Adds entries made elsewhere (definition views, definitions.h), keeping
  // taken_at_ns and the stats. InvalidArgument as FromEntries (a path
  // already there is a duplicate); unchanged then.
  absl::Status AddEntries(std::vector<InventoryEntry> extra);

  // The entry for `path`, or null. O(log n).
  const InventoryEntry* Find(std::string_view path) const;

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<InventoryEntry>& entries() const { return entries_; }
  std::vector<InventoryEntry>::const_iterator begin() const {
    return entries_.begin();
  }
  std::vector<InventoryEntry>::const_iterator end() const {
    return entries_.end();
  }

  // Lower bound of the time the scan started (see the top of this file).
  int64_t taken_at_ns() const { return taken_at_ns_; }
  // Counters of the Scan that built this inventory (zero otherwise).
  const ScanStats& stats() const { return stats_; }

  // Changes from `base` to `head`, sorted by path:
  //   - a path only in head is kAdded, only in base kDeleted (a kMissing
  //     entry counts as absent: missing -> regular is kAdded, regular ->
  //     missing is kDeleted, missing on both sides or on one side and absent
  //     on the other is no change);
  //   - a path in both is kModified when the type differs, the hash differs
  //     (for a directory: its names-hash, i.e. its listing; for a view: its
  //     value), or a regular file's executable bits (0111) differ (a
  //     view's mode is zero: only its value can change it).
  // Stat fields alone (mtime, inode, …) never make a change.
  static InventoryDiff Diff(const Inventory& base, const Inventory& head);

  // The binary format described at the top of this file.
  std::string Serialize() const;
  static absl::StatusOr<Inventory> Parse(std::string_view bytes);

  // Writes Serialize() atomically: a temporary file in the same directory,
  // fsync, rename over `path`, fsync of the directory.
  absl::Status WriteFile(const std::string& path) const;
  static absl::StatusOr<Inventory> ReadFile(const std::string& path);

  // One JSON object per line per entry, in path order:
  //   {"path":"a/b.py","type":"regular","size":12,"mtime_ns":1700000000,
  //    "hash":"<32 hex>"}
  // "hash" is null for kOther and kMissing. A path that is not valid UTF-8
  // has each invalid byte replaced by U+FFFD in "path" and gets an extra
  // "path_hex" with its raw bytes in lowercase hex.
  std::string ToJsonLines() const;

 private:
  std::vector<InventoryEntry> entries_;
  int64_t taken_at_ns_ = 0;
  ScanStats stats_;
};

}  // namespace ste

#endif  // STE_INVENTORY_H_
