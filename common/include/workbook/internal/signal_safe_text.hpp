#pragma once
/// \file signal_safe_text.hpp
/// \brief Text appended to a fixed buffer, with no allocation and no locks: what a signal handler
/// (the crash report, the code location of a crash) may use to compose its message.

#include <cstddef>
#include <cstdint>

namespace workbook::testing::internal {

/// Appends text to a fixed buffer, cut at its capacity; finish() ends it with a NUL.
class Text {
 public:
  Text(char* out, std::size_t capacity) : out_(out), capacity_(capacity) {}
  Text& operator<<(const char* s) {
    while (*s && length_ + 1 < capacity_) out_[length_++] = *s++;
    return *this;
  }
  Text& operator<<(std::size_t v) {
    char digits[24];
    int k = 0;
    do {
      digits[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    while (k > 0 && length_ + 1 < capacity_) out_[length_++] = digits[--k];
    return *this;
  }
  /// The first `count` characters of `s` (fewer where it ends first).
  Text& write(const char* s, std::size_t count) {
    for (std::size_t i = 0; i < count && s[i] && length_ + 1 < capacity_; ++i)
      out_[length_++] = s[i];
    return *this;
  }
  Text& hex(std::uintptr_t v) {
    *this << "0x";
    char digits[20];
    int k = 0;
    do {
      digits[k++] = "0123456789abcdef"[v % 16];
      v /= 16;
    } while (v);
    while (k > 0 && length_ + 1 < capacity_) out_[length_++] = digits[--k];
    return *this;
  }
  std::size_t finish() {
    if (capacity_ > 0) out_[length_] = '\0';
    return length_;
  }

 private:
  char* out_;
  std::size_t capacity_;
  std::size_t length_ = 0;
};

}  // namespace workbook::testing::internal
