// SHA-256 against the FIPS 180-4 example vectors (NIST's "SHA256.pdf"
// examples and the long-message test), fed in one piece and in odd pieces.
#include <gtest/gtest.h>

#include <string>

#include "common/sha256.h"

namespace {

std::string hex_of(const std::string& message) {
  return tte::sha256_hex(message.data(), message.size());
}

TEST(Sha256, FipsExampleVectors) {
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnop"
                   "qklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(hex_of(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesGiveTheSameDigest) {
  const std::string message(1000, 'x');
  tte::Sha256 hash;
  size_t at = 0;
  for (size_t piece = 1; at < message.size(); piece = piece * 3 % 97 + 1) {
    const size_t n = std::min(piece, message.size() - at);
    hash.update(message.data() + at, n);
    at += n;
  }
  const auto digest = hash.finish();
  tte::Sha256 whole;
  whole.update(message.data(), message.size());
  EXPECT_EQ(digest, whole.finish());
}

}  // namespace
