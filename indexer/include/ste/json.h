// JSON string output for paths and scopes, which are byte strings.
//
// ste's JSON outputs (every `--format json`: docs/outputs.md; each carries
// a "version" field, written by cli/output_format) all write paths the
// same way: "path" is always valid UTF-8 (each byte that is not part of a
// valid UTF-8 sequence becomes U+FFFD), and when that replacement happened
// a second field "<name>_hex" carries the raw bytes in lowercase hex, so
// no path is ever lost or confused with another.
#ifndef STE_JSON_H_
#define STE_JSON_H_

#include <string>
#include <string_view>

namespace ste {

// The length of the valid UTF-8 sequence starting at s[i] (i < s.size()),
// or 0 when the byte there starts none (overlongs and surrogates count as
// invalid).
size_t Utf8SequenceLength(std::string_view s, size_t i);

// True if `bytes` is valid UTF-8 (no overlongs, no surrogates).
bool IsValidUtf8(std::string_view bytes);

// Appends `bytes` as a quoted JSON string to *out (control characters
// escaped, invalid UTF-8 bytes replaced by U+FFFD).
void AppendJsonString(std::string_view bytes, std::string* out);

// Appends `"name":"<value>"` and, when `value` is not valid UTF-8,
// `,"name_hex":"<hex>"`. No leading or trailing comma.
void AppendJsonPathField(std::string_view name, std::string_view value,
                         std::string* out);

// Lowercase hex of every byte.
std::string HexBytes(std::string_view bytes);

// For text output: the bytes with '\\', control characters and invalid
// UTF-8 written as C escapes (\n, \t, \\, \xNN), so one path is one line.
std::string EscapeForText(std::string_view bytes);

}  // namespace ste

#endif  // STE_JSON_H_
