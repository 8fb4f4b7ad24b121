#include "workloads/train/ring_attention.h"

#include <algorithm>
#include <set>

#include "workloads/train/tensor_split.h"

namespace workloads {

namespace {

using Names = std::vector<std::string>;

std::string at_step(const std::string& name, std::uint32_t j) { return j == 0 ? name : name + "@" + std::to_string(j); }

// The attention core of one pass, repeated for blocks 1 .. N-1 and chained
// to the permutes that bring them.
class RingPass {
 public:
  RingPass(std::vector<models::MatmulSpec>& mms, std::vector<models::ElementwiseSpec>& ews, std::string prefix,
           bool backward, std::uint32_t ranks, std::uint64_t kv_bytes)
      : mms_(mms), ews_(ews), prefix_(std::move(prefix)), backward_(backward), n_(ranks), kv_bytes_(kv_bytes) {}

  std::vector<RingTransfer> build() {
    find_core();
    if (core_.empty()) return {};
    std::vector<RingTransfer> transfers;
    for (std::uint32_t j = 1; j < n_; ++j) transfers.push_back(kv_transfer(j));
    if (backward_)
      for (std::uint32_t j = 1; j <= n_; ++j) transfers.push_back(dkv_transfer(j));
    Names last = sinks(n_ - 1);
    if (backward_) last.push_back(dkv_name(n_));  // each block's dK/dV back home
    redirect_readers(last);
    const std::vector<models::MatmulSpec> mm0 = mms_;
    const std::vector<models::ElementwiseSpec> ew0 = ews_;
    for (std::uint32_t j = 1; j < n_; ++j) {
      for (const auto& mm : mm0)
        if (core_.count(mm.name)) mms_.push_back(copy(mm, j));
      for (const auto& ew : ew0)
        if (core_.count(ew.name)) ews_.push_back(copy(ew, j));
    }
    return transfers;
  }

 private:
  bool in_core(const Names& after) const {
    return std::any_of(after.begin(), after.end(), [&](const std::string& a) { return core_.count(a) > 0; });
  }

  // Attention matmuls, then the elementwise ops that read only core ops.
  void find_core() {
    for (const auto& mm : mms_)
      if (models::is_attention(mm.kind)) {
        core_.insert(mm.name);
        halved_ = halved_ || mm.causal != models::Causal::none;
      }
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& ew : ews_)
        if (!core_.count(ew.name) && !ew.after.empty() &&
            std::all_of(ew.after.begin(), ew.after.end(), [&](const std::string& a) { return core_.count(a) > 0; })) {
          core_.insert(ew.name);
          grew = true;
        }
    }
    for (const auto& mm : mms_)
      if (core_.count(mm.name)) visit(mm.name, mm.after);
    for (const auto& ew : ews_)
      if (core_.count(ew.name)) visit(ew.name, ew.after);
  }
  void visit(const std::string& name, const Names& after) {
    if (!in_core(after)) entries_.insert(name);
    for (const auto& a : after)
      if (core_.count(a)) {
        waited_.insert(a);
      } else if (std::find(outside_.begin(), outside_.end(), a) == outside_.end()) {
        outside_.push_back(a);
      }
  }

  // Step j's core ops no other core op waits for.
  Names sinks(std::uint32_t j) const {
    Names out;
    for (const auto& c : core_)
      if (!waited_.count(c)) out.push_back(at_step(c, j));
    return out;
  }

  std::string kv_name(std::uint32_t j) const {
    return prefix_ + (backward_ ? ".kv.bwd.ring" : ".kv.ring") + std::to_string(j);
  }
  std::string dkv_name(std::uint32_t j) const { return prefix_ + ".dkv.ring" + std::to_string(j); }

  // Block j arrives: the first sends the chip's own K/V (the forward: once
  // projected; the backward: stashed, at the pass's start), every later one
  // forwards the block that came before, into the buffer block j - 2 used.
  RingTransfer kv_transfer(std::uint32_t j) const {
    RingTransfer t{kv_name(j), {}, kv_bytes_, false};
    if (j == 1) {
      if (!backward_) t.after = outside_;
    } else {
      t.after = sinks(j - 2);
      t.after.push_back(kv_name(j - 1));
    }
    return t;
  }
  // The dK/dV of the block step j - 1 used, with this chip's share added,
  // on to the next chip (j = N: to the block's owner).
  RingTransfer dkv_transfer(std::uint32_t j) const {
    RingTransfer t{dkv_name(j), sinks(j - 1), kv_bytes_, true};
    if (j > 1) t.after.push_back(dkv_name(j - 1));
    return t;
  }

  // Ops outside the core that read it read the last block's result.
  void redirect_readers(const Names& last) {
    const auto redirect = [&](Names& after) {
      if (!in_core(after)) return;
      Names out;
      for (const auto& a : after)
        if (!core_.count(a)) out.push_back(a);
      for (const auto& l : last)
        if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
      after = std::move(out);
    };
    for (auto& mm : mms_)
      if (!core_.count(mm.name)) redirect(mm.after);
    for (auto& ew : ews_)
      if (!core_.count(ew.name)) redirect(ew.after);
  }

  // Step j's copy: core inputs from step j, and an entry op also waits for
  // block j and for step j - 1 (the online softmax, the accumulated dQ).
  Names step_after(const std::string& name, const Names& after, std::uint32_t j) const {
    Names out;
    for (const auto& a : after) out.push_back(core_.count(a) ? at_step(a, j) : a);
    if (entries_.count(name)) {
      out.push_back(kv_name(j));
      for (const auto& s : sinks(j - 1)) out.push_back(s);
    }
    return out;
  }

  // An off-diagonal block under causal masking is half the square (the
  // zigzag layout): the kernel on half the queries, nothing masked.
  models::MatmulSpec copy(models::MatmulSpec mm, std::uint32_t j) const {
    mm.after = step_after(mm.name, mm.after, j);
    mm.name = at_step(mm.name, j);
    if (halved_) {
      if (mm.causal == models::Causal::depth_from_row) {
        mm.k /= 2;  // queries are the contraction (dV = P^T dO, dK = dS^T Q)
      } else {
        mm.m /= 2;
      }
      mm.causal = models::Causal::none;
    }
    return mm;
  }
  models::ElementwiseSpec copy(models::ElementwiseSpec ew, std::uint32_t j) const {
    ew.after = step_after(ew.name, ew.after, j);
    ew.name = at_step(ew.name, j);
    if (halved_) {
      ew.elements /= 2;
      ew.bytes /= 2;
    }
    return ew;
  }

  std::vector<models::MatmulSpec>& mms_;
  std::vector<models::ElementwiseSpec>& ews_;
  std::string prefix_;
  bool backward_;
  std::uint32_t n_;
  std::uint64_t kv_bytes_;
  std::set<std::string> core_, entries_, waited_;
  Names outside_;  // what the core reads from outside it, in order
  bool halved_ = false;
};

}  // namespace

RingLayer ring_attention(const models::LayerSpec& layer, std::uint32_t ranks, std::uint64_t kv_bytes) {
  RingLayer r{layer, {}, {}};
  if (ranks < 2) return r;
  r.forward = RingPass(r.layer.forward, r.layer.elementwise_fwd, layer.name, false, ranks, kv_bytes).build();
  r.backward = RingPass(r.layer.backward, r.layer.elementwise_bwd, layer.name, true, ranks, kv_bytes).build();
  return r;
}

std::uint64_t ring_block_bytes(const models::LayerSpec& layer, std::uint32_t tp) {
  return local_stash_bytes(layer, tp, false, [&](const models::StashSpec& e) {
    return e.name == layer.name + ".attn.k" || e.name == layer.name + ".attn.v";
  });
}

}  // namespace workloads
