#pragma once
// How a non-blocking operation (an engine op, a DMA transfer, a network
// message) reports back: a listener and the caller's token for the
// operation, two words copied by value, so starting an operation allocates
// nothing. Called exactly once, from the process activation in which the
// operation completes (or, for an operation that takes no time, from inside
// the call that started it, where the callee says so); `failed` instead of
// `completed` when it cannot complete.
#include <cstdint>
#include <exception>

namespace hw {

class CompletionListener {
 public:
  virtual void completed(std::uint64_t token) = 0;
  // The operation threw after it started (e.g. in a thread of its own); it
  // will never complete. The listener stops the simulation.
  virtual void failed(std::uint64_t token, std::exception_ptr error) = 0;

 protected:
  ~CompletionListener() = default;
};

struct Completion {
  CompletionListener* listener = nullptr;
  std::uint64_t token = 0;
  void operator()() const { listener->completed(token); }
  void fail(std::exception_ptr error) const { listener->failed(token, std::move(error)); }
};

}  // namespace hw
