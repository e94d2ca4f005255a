#include "tools/tte_run/npy_reader.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

namespace tte::tools {
namespace {

struct NpyType {
  const char* code;  // descr without the byte-order character
  DLDataType dtype;
};

constexpr NpyType kNpyTypes[] = {
    {"b1", {kDLBool, 8, 1}},     {"u1", {kDLUInt, 8, 1}},       {"u2", {kDLUInt, 16, 1}},
    {"u4", {kDLUInt, 32, 1}},    {"u8", {kDLUInt, 64, 1}},      {"i1", {kDLInt, 8, 1}},
    {"i2", {kDLInt, 16, 1}},     {"i4", {kDLInt, 32, 1}},       {"i8", {kDLInt, 64, 1}},
    {"f2", {kDLFloat, 16, 1}},   {"f4", {kDLFloat, 32, 1}},     {"f8", {kDLFloat, 64, 1}},
    {"c8", {kDLComplex, 64, 1}}, {"c16", {kDLComplex, 128, 1}},
};

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// A cursor over the header, a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& text) : text_(text) {}

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool at(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool string(std::string* out) {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return false;
    }
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string::npos) {
      return false;
    }
    *out = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  bool word(std::string* out) {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
    *out = text_.substr(start, pos_ - start);
    return !out->empty();
  }
  bool integer(int64_t* out) {
    std::string digits;
    if (!word(&digits)) {
      return false;
    }
    int64_t value = 0;
    for (char c : digits) {
      if (!std::isdigit(static_cast<unsigned char>(c)) ||
          value > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) {
        return false;
      }
      value = value * 10 + (c - '0');
    }
    *out = value;
    return true;
  }

 private:
  const std::string& text_;
  size_t pos_ = 0;
};

bool fail(std::string* error, const std::string& message) {
  *error = message;
  return false;
}

}  // namespace

std::optional<DLDataType> npy_descr_to_dtype(const std::string& descr) {
  if (descr.size() < 2) {
    return std::nullopt;
  }
  const char order = descr[0];
  const std::string code = descr.substr(1);
  for (const NpyType& type : kNpyTypes) {
    if (code != type.code) {
      continue;
    }
    const bool one_byte = type.dtype.bits == 8;
    // '|' means "not applicable"; '=' is native, little-endian on every
    // platform this project targets.
    if (order == '<' || order == '=' || (order == '|' && one_byte)) {
      return type.dtype;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> npy_dtype_to_descr(DLDataType dtype) {
  if (dtype.lanes != 1) {
    return std::nullopt;
  }
  for (const NpyType& type : kNpyTypes) {
    if (type.dtype.code == dtype.code && type.dtype.bits == dtype.bits) {
      return std::string(type.dtype.bits == 8 ? "|" : "<") + type.code;
    }
  }
  return std::nullopt;
}

size_t dtype_size(DLDataType dtype) {
  return static_cast<size_t>((dtype.bits + 7) / 8) * (dtype.lanes == 0 ? 1 : dtype.lanes);
}

bool parse_npy(const std::vector<uint8_t>& bytes, NpyArray* out, std::string* error) {
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    return fail(error, "not a .npy file (no \\x93NUMPY magic)");
  }
  const uint8_t major = bytes[6];
  size_t header_size = 0;
  size_t header_start = 0;
  if (major == 1) {
    if (bytes.size() < 10) {
      return fail(error, "truncated .npy header");
    }
    header_size = bytes[8] | (static_cast<size_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      return fail(error, "truncated .npy header");
    }
    header_size = bytes[8] | (static_cast<size_t>(bytes[9]) << 8) |
                  (static_cast<size_t>(bytes[10]) << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    return fail(error, ".npy format version " + std::to_string(major) +
                           " is not supported (expected 1, 2 or 3)");
  }
  if (header_size > bytes.size() - header_start) {
    return fail(error, "truncated .npy header (" + std::to_string(header_size) +
                           " header bytes announced, " +
                           std::to_string(bytes.size() - header_start) + " present)");
  }
  const std::string header(bytes.begin() + header_start,
                           bytes.begin() + header_start + header_size);

  std::string descr;
  bool have_descr = false;
  bool have_order = false;
  bool fortran_order = false;
  bool have_shape = false;
  std::vector<int64_t> shape;
  HeaderParser parser(header);
  if (!parser.consume('{')) {
    return fail(error, "malformed .npy header: expected a dict, got '" + header + "'");
  }
  while (!parser.consume('}')) {
    std::string key;
    if (!parser.string(&key) || !parser.consume(':')) {
      return fail(error, "malformed .npy header '" + header + "'");
    }
    if (key == "descr") {
      if (parser.at('[')) {
        return fail(error, "structured arrays are not supported; save a plain numeric array");
      }
      if (!parser.string(&descr)) {
        return fail(error, "malformed 'descr' in .npy header '" + header + "'");
      }
      have_descr = true;
    } else if (key == "fortran_order") {
      std::string value;
      if (!parser.word(&value) || (value != "True" && value != "False")) {
        return fail(error, "malformed 'fortran_order' in .npy header '" + header + "'");
      }
      fortran_order = value == "True";
      have_order = true;
    } else if (key == "shape") {
      if (!parser.consume('(')) {
        return fail(error, "malformed 'shape' in .npy header '" + header + "'");
      }
      while (!parser.consume(')')) {
        int64_t dim = 0;
        if (!parser.integer(&dim)) {
          return fail(error, "malformed 'shape' in .npy header '" + header + "'");
        }
        shape.push_back(dim);
        if (!parser.consume(',') && !parser.at(')')) {
          return fail(error, "malformed 'shape' in .npy header '" + header + "'");
        }
      }
      have_shape = true;
    } else {
      return fail(error, "unknown key '" + key + "' in .npy header");
    }
    if (!parser.consume(',') && !parser.at('}')) {
      return fail(error, "malformed .npy header '" + header + "'");
    }
  }
  if (!have_descr || !have_order || !have_shape) {
    return fail(error, ".npy header lacks 'descr', 'fortran_order' or 'shape': '" + header + "'");
  }
  if (fortran_order) {
    return fail(error,
                "Fortran-order arrays are not supported; save np.ascontiguousarray(a) instead");
  }
  const std::optional<DLDataType> dtype = npy_descr_to_dtype(descr);
  if (!dtype) {
    if (!descr.empty() && descr[0] == '>') {
      return fail(error, "big-endian arrays ('" + descr +
                             "') are not supported; save a.astype(a.dtype.newbyteorder('<'))");
    }
    return fail(error, "element type '" + descr +
                           "' is not supported (bool, int8-64, uint8-64, float16/32/64 and "
                           "complex64/128 are)");
  }
  uint64_t count = 1;
  for (int64_t dim : shape) {
    if (dim != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(dim)) {
      return fail(error, "shape overflows");
    }
    count *= static_cast<uint64_t>(dim);
  }
  const size_t data_start = header_start + header_size;
  if (count > std::numeric_limits<uint64_t>::max() / dtype_size(*dtype)) {
    return fail(error, "shape overflows");
  }
  const uint64_t expected = count * dtype_size(*dtype);
  if (bytes.size() - data_start != expected) {
    return fail(error, "data holds " + std::to_string(bytes.size() - data_start) +
                           " bytes, but shape and dtype '" + descr + "' need " +
                           std::to_string(expected));
  }
  out->dtype = *dtype;
  out->shape = std::move(shape);
  out->data.assign(bytes.begin() + data_start, bytes.end());
  return true;
}

bool read_npy(const std::string& path, NpyArray* out, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
  if (!parse_npy(bytes, out, error)) {
    *error = "'" + path + "': " + *error;
    return false;
  }
  return true;
}

}  // namespace tte::tools
