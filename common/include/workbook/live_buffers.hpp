#pragma once
/// \file live_buffers.hpp
/// \brief The registry of the buffers a test has alive, so that a crash report can say where a
/// fault address lies: "4 bytes past the end of the output (1000 floats), inside its guard zone".
///
/// GuardedBuffer registers itself. The registry is a fixed array of slots claimed and released
/// with atomics: no allocation and no lock, so a signal handler may read it at any moment.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace workbook {

/// One live buffer, as the crash report describes it.
struct LiveBuffer {
  std::uintptr_t begin = 0;      ///< the first byte of the allocation, front guard included
  std::size_t front = 0;         ///< bytes before element 0 (the guard zone and any misalignment)
  std::size_t bytes = 0;         ///< bytes of the elements a kernel may touch
  std::size_t back = 0;          ///< bytes of guard zone after the last element
  std::size_t element_size = 0;  ///< bytes per element
  const char* type = "";         ///< the element type, "float" (a string literal)
  const char* name = "";         ///< what the buffer is, "output" (a string literal)
};

/// The registry's storage; use LiveBufferEntry and live_buffers().
namespace detail {

/// One slot of the registry: a LiveBuffer in atomics.
struct LiveSlot {
  /// Free (0), being written (1) or readable (2): readers look only at readable slots.
  std::atomic<int> state{0};
  std::atomic<std::uintptr_t> begin{0};      ///< LiveBuffer::begin
  std::atomic<std::size_t> front{0};         ///< LiveBuffer::front
  std::atomic<std::size_t> bytes{0};         ///< LiveBuffer::bytes
  std::atomic<std::size_t> back{0};          ///< LiveBuffer::back
  std::atomic<std::size_t> element_size{0};  ///< LiveBuffer::element_size
  std::atomic<const char*> type{""};         ///< LiveBuffer::type
  std::atomic<const char*> name{""};         ///< LiveBuffer::name
};
/// How many buffers can be registered at once; more are simply not registered.
inline constexpr std::size_t kLiveSlots = 64;
/// The registry.
inline std::array<LiveSlot, kLiveSlots> live_slots;

}  // namespace detail

/// A buffer's place in the registry for as long as it is alive: movable, not copyable. When all
/// slots are taken the buffer is simply not registered (a crash report then says less).
class LiveBufferEntry {
 public:
  LiveBufferEntry() = default;
  /// Registers `buffer`.
  explicit LiveBufferEntry(const LiveBuffer& buffer) {
    for (std::size_t i = 0; i < detail::kLiveSlots; ++i) {
      detail::LiveSlot& s = detail::live_slots[i];
      int expected = 0;
      if (!s.state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) continue;
      s.begin.store(buffer.begin, std::memory_order_relaxed);
      s.front.store(buffer.front, std::memory_order_relaxed);
      s.bytes.store(buffer.bytes, std::memory_order_relaxed);
      s.back.store(buffer.back, std::memory_order_relaxed);
      s.element_size.store(buffer.element_size, std::memory_order_relaxed);
      s.type.store(buffer.type, std::memory_order_relaxed);
      s.name.store(buffer.name, std::memory_order_relaxed);
      s.state.store(2, std::memory_order_release);
      slot_ = static_cast<int>(i);
      return;
    }
  }
  /// Takes over `other`'s slot.
  LiveBufferEntry(LiveBufferEntry&& other) noexcept : slot_(std::exchange(other.slot_, -1)) {}
  /// Releases this slot, then takes over `other`'s.
  LiveBufferEntry& operator=(LiveBufferEntry&& other) noexcept {
    if (this != &other) {
      release();
      slot_ = std::exchange(other.slot_, -1);
    }
    return *this;
  }
  LiveBufferEntry(const LiveBufferEntry&) = delete;
  LiveBufferEntry& operator=(const LiveBufferEntry&) = delete;
  ~LiveBufferEntry() { release(); }

 private:
  void release() {
    if (slot_ >= 0) detail::live_slots[static_cast<std::size_t>(slot_)].state.store(0);
    slot_ = -1;
  }
  int slot_ = -1;
};

/// Copies up to `capacity` live buffers into `out` and returns how many; async-signal-safe.
inline std::size_t live_buffers(LiveBuffer* out, std::size_t capacity) {
  std::size_t count = 0;
  for (detail::LiveSlot& s : detail::live_slots) {
    if (count == capacity) break;
    if (s.state.load(std::memory_order_acquire) != 2) continue;
    out[count++] = {
        s.begin.load(std::memory_order_relaxed),        s.front.load(std::memory_order_relaxed),
        s.bytes.load(std::memory_order_relaxed),        s.back.load(std::memory_order_relaxed),
        s.element_size.load(std::memory_order_relaxed), s.type.load(std::memory_order_relaxed),
        s.name.load(std::memory_order_relaxed)};
  }
  return count;
}

}  // namespace workbook
