#include "interconnect/passes.h"

#include "interconnect/topology.h"

namespace interconnect {

namespace {
int wrap(int i, int n) { return ((i % n) + n) % n; }

std::string where(int axis, int n, int dir) {
  const std::string d = dir > 0 ? "+" : "-";
  if (axis == kGroupRing) return " over the ring of " + std::to_string(n) + " chips (" + d + ")";
  return " along " + std::string(axis_name(axis)) + " (" + std::to_string(n) + " chips, " + d + ")";
}

std::string what(PassKind kind) { return kind == PassKind::reduce_scatter ? "reduce-scatter" : "all-gather"; }

Transfer transfer(int peer, std::uint32_t chunk, const Region& region, int n) {
  const Region c = region.chunk(chunk, static_cast<std::uint64_t>(n));
  return {peer, chunk, c.offset, c.count};
}
}  // namespace

RingPass::RingPass(PassKind kind, ChipList ring, int position, int dir, Region region, int axis)
    : kind_(kind),
      ring_(std::move(ring)),
      n_(static_cast<int>(ring_->size())),
      pos_(position),
      dir_(dir),
      axis_(axis),
      region_(region),
      quotient_(region.count / static_cast<std::uint64_t>(n_)),
      remainder_(region.count % static_cast<std::uint64_t>(n_)),
      next_((*ring_)[wrap(position + dir, n_)]),
      prev_((*ring_)[wrap(position - dir, n_)]) {}

int RingPass::steps() const { return n_ - 1; }

// Chunk c of the region in the pass's own (mirrored for dir -1) numbering;
// c may be off by up to 2n below zero. Its tag is the step: a chip's send of
// step k is its successor's receive of step k, and a tag that does not
// depend on the chip's place keeps the ring's schedules images of each
// other (translations.h).
Transfer RingPass::chunk(int peer, int virtual_chunk, int k) const {
  int c = virtual_chunk;
  while (c < 0) c += n_;
  if (dir_ < 0) c = n_ - 1 - c;
  const std::uint64_t i = static_cast<std::uint64_t>(c);
  const std::uint64_t offset = region_.offset + i * quotient_ + (i < remainder_ ? i : remainder_);
  return {peer, static_cast<std::uint32_t>(k), offset, quotient_ + (i < remainder_ ? 1 : 0)};
}

void RingPass::step(int k, Step& out) const {
  const int v = dir_ > 0 ? pos_ : n_ - 1 - pos_;
  if (kind_ == PassKind::reduce_scatter) {
    out.sends.push_back(chunk(next_, v - k - 1, k));
    out.recvs.push_back(chunk(prev_, v - k - 2, k));
    out.reduce = true;
  } else {
    out.sends.push_back(chunk(next_, v - k, k));
    out.recvs.push_back(chunk(prev_, v - k - 1, k));
  }
}

std::string RingPass::describe() const { return "ring " + what(kind_) + where(axis_, n_, dir_); }

LinePass::LinePass(PassKind kind, ChipList line, int position, int dir, Region region, int axis)
    : kind_(kind),
      line_(std::move(line)),
      n_(static_cast<int>(line_->size())),
      pos_(position),
      dir_(dir),
      axis_(axis),
      region_(region) {}

int LinePass::steps() const {
  const int v = virtual_pos();
  if (n_ <= 1) return 0;
  if (kind_ == PassKind::reduce_scatter) return v == 0 ? n_ - 1 : n_ - v;
  return v < n_ - 1 ? v + 1 : v;
}

void LinePass::step(int k, Step& out) const {
  const int v = virtual_pos();
  const int up = v + 1 < n_ ? (*line_)[pos_ + dir_] : -1;  // next chip in the direction of travel
  const int down = v > 0 ? (*line_)[pos_ - dir_] : -1;
  if (kind_ == PassKind::reduce_scatter) {
    out.reduce = true;
    if (v == 0) {
      out.sends.push_back(transfer(up, actual_chunk(n_ - 1 - k), region_, n_));
      return;
    }
    if (k >= 1) out.sends.push_back(transfer(up, actual_chunk(n_ - k), region_, n_));
    out.recvs.push_back(transfer(down, actual_chunk(n_ - 1 - k), region_, n_));
    return;
  }
  if (up >= 0) out.sends.push_back(transfer(up, actual_chunk(v - k), region_, n_));
  if (k <= v - 1) out.recvs.push_back(transfer(down, actual_chunk(v - 1 - k), region_, n_));
}

std::string LinePass::describe() const { return "line " + what(kind_) + where(axis_, n_, dir_); }

ChainPass::ChainPass(ChipList chain, int position, Region region, int chunks)
    : chain_(std::move(chain)),
      n_(static_cast<int>(chain_->size())),
      pos_(position),
      region_(region),
      chunks_(chunks) {}

int ChainPass::steps() const {
  if (n_ <= 1) return 0;
  return pos_ == 0 || pos_ == n_ - 1 ? chunks_ : chunks_ + 1;
}

void ChainPass::step(int k, Step& out) const {
  auto piece = [&](int peer, int c) {
    const Region r = region_.chunk(static_cast<std::uint64_t>(c), static_cast<std::uint64_t>(chunks_));
    return Transfer{peer, static_cast<std::uint32_t>(c), r.offset, r.count};
  };
  if (pos_ == 0) {
    out.sends.push_back(piece((*chain_)[1], k));
    return;
  }
  if (pos_ < n_ - 1 && k >= 1) out.sends.push_back(piece((*chain_)[pos_ + 1], k - 1));
  if (k < chunks_) out.recvs.push_back(piece((*chain_)[pos_ - 1], k));
}

std::string ChainPass::describe() const {
  return "broadcast chain of " + std::to_string(n_) + " chips from chip " + std::to_string((*chain_)[0]) + " in " +
         std::to_string(chunks_) + " pieces";
}

ListPass::ListPass(std::vector<Step> steps, std::string label) : steps_(std::move(steps)), label_(std::move(label)) {}

}  // namespace interconnect
