#include "ste/json.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace ste {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; k++) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n;
}

bool IsValidUtf8(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    size_t n = Utf8SequenceLength(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void AppendJsonString(std::string_view bytes, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < bytes.size();) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    size_t n = Utf8SequenceLength(bytes, i);
    if (n == 0) {
      out->append("\xEF\xBF\xBD");  // U+FFFD
      i++;
      continue;
    }
    if (n > 1) {
      out->append(bytes.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        if (c < 0x20 || c == 0x7F) {
          absl::StrAppendFormat(out, "\\u%04x", c);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    i++;
  }
  out->push_back('"');
}

void AppendJsonPathField(std::string_view name, std::string_view value,
                         std::string* out) {
  AppendJsonString(name, out);
  out->push_back(':');
  AppendJsonString(value, out);
  if (!IsValidUtf8(value)) {
    out->push_back(',');
    AppendJsonString(std::string(name) + "_hex", out);
    out->push_back(':');
    AppendJsonString(HexBytes(value), out);
  }
}

std::string HexBytes(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 15]);
  }
  return hex;
}

std::string EscapeForText(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    size_t n = Utf8SequenceLength(bytes, i);
    if (n > 1) {
      out.append(bytes.substr(i, n));
      i += n;
      continue;
    }
    if (n == 0 || c < 0x20 || c == 0x7F) {
      switch (c) {
        case '\n': out.append("\\n"); break;
        case '\t': out.append("\\t"); break;
        case '\r': out.append("\\r"); break;
        default: absl::StrAppendFormat(&out, "\\x%02x", c);
      }
    } else if (c == '\\') {
      out.append("\\\\");
    } else {
      out.push_back(static_cast<char>(c));
    }
    i++;
  }
  return out;
}

}  // namespace ste
