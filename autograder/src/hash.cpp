// SHA-256 through Nettle (see hash.hpp).
#include <grade/hash.hpp>

#include <cstdint>

#include <nettle/sha2.h>

namespace workbook::grade {

std::string hash_hex(std::string_view data) {
  sha256_ctx context;
  sha256_init(&context);
  sha256_update(&context, data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&context, SHA256_DIGEST_SIZE, digest);
  static constexpr char hex[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * SHA256_DIGEST_SIZE);
  for (const std::uint8_t byte : digest) {
    text += hex[byte >> 4];
    text += hex[byte & 0xf];
  }
  return text;
}

}  // namespace workbook::grade
