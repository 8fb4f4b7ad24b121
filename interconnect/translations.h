#pragma once
// Translations of a torus along some of its wrapping axes. Where every chip
// runs the same program as the chips it is moved onto, and every collective
// and message is moved onto its own image, the pod's traffic is invariant
// under them: the network then simulates one chip per orbit (the one whose
// coordinates on those axes are 0) and each link stands for its images, so
// a 16x16x16 all-reduce costs what one chip's part of it does. A message
// from an orbit's chip to any chip is the image of the message its
// destination's orbit chip receives; a link carrying a message's images
// twice (a route that crosses two links of one orbit) shares itself between
// them. docs/interconnect.md, "Symmetric pods".
#include <array>
#include <climits>
#include <string>
#include <vector>

#include "interconnect/algorithms.h"
#include "interconnect/topology.h"

namespace interconnect {

// Whether a plan's schedules are images of their orbit chip's. Where a
// buffer does not divide evenly into chunks, a chip's chunks hold an
// element more or less than its orbit chip's: its messages are then
// simulated as the orbit chip's images, a few bytes off per step.
struct Invariance {
  std::string blocker;  // why not ("" when they are)
  // Bytes by which chips' transfers differ from their orbit chip's: per
  // step of the schedule the largest difference over the orbit, summed over
  // the steps (the largest orbit's sum). A chip's collective may end up to
  // that many bytes' link and reduction time from its orbit chip's.
  std::uint64_t uneven_bytes = 0;
  // Where a chip's chunk is empty and its orbit chip's is not (or the other
  // way round), one of them waits for a message's latency that the other
  // does not: per step the longest such route in hops, summed over steps.
  std::uint64_t uneven_hops = 0;
};

class Translations {
 public:
  Translations() = default;  // none: every chip stands for itself
  // `axes`: axes that wrap: ICI axes (each slice's chips moved inside it)
  // and DCN axes of a multislice pod (slice shifts). In a pod of several
  // slices an ICI axis must move hosts onto hosts (hosts_move(); its stride
  // a whole number of hosts), so that each host's NICs stand for their
  // images' as each chip's links do.
  Translations(const Topology& topology, std::vector<int> axes);
  // Whether a translation along `axis` moves every host onto a host: always
  // on one slice (hosts matter only between slices), and on a DCN axis; an
  // ICI axis whose chips one step apart lie a whole number of hosts apart.
  static bool hosts_move(const Topology& topology, int axis);
  // The axes a pod's translations may use: its wrapping axes that move
  // hosts onto hosts; none where a link is degraded or has failed
  // (pod.links), since a translation moves that link onto a nominal one.
  static std::vector<int> candidate_axes(const Topology& topology);

  bool none() const { return axes_.empty(); }
  const std::vector<int>& axes() const { return axes_; }
  int order() const { return order_; }  // chips in each orbit
  // The chip standing for `chip`'s orbit: its coordinates on the axes set to 0.
  int rep(int chip) const;
  bool is_rep(int chip) const { return rep(chip) == chip; }
  // `chip` moved by the translation that takes `from` to `to`.
  int moved(int chip, int from, int to) const;
  // The same, with the translation worked out once.
  struct Move {
    std::array<int, 3> by{};  // steps up each of axes()
  };
  Move move(int from, int to) const;
  int moved(int chip, const Move& mv) const;
  // The link standing for a link's orbit: an ICI link's the same direction
  // of its source chip's orbit chip; a DCN server's (docs/interconnect.md,
  // "DCN") the same server of the orbit chip's own chip, host or slice.
  int link_rep(int link) const;
  // How many of the pod's flows a simulated flow stands for on an orbit
  // link: 1, except on a slice's fabric share under ICI axes, which every
  // translation inside the slice leaves in place, so that all the flow's
  // images under them (order of the ICI axes) cross it. The flow then
  // weighs that much there (its share, bytes and busy time), as a route
  // crossing two links of one orbit weighs 2 on their orbit link.
  int weight(int link) const { return link >= fabric_base_ ? ici_order_ : 1; }
  // Whether the route src -> dst goes half way round one of the axes: the
  // tie is broken by the parity of the source's coordinate (Topology::route),
  // so the route's images are not the images' routes.
  bool ties(int src, int dst) const;
  int hops(int a, int b) const;  // ICI hops between two chips of a slice; 1 (a DCN route) between slices
  // Whether every chip's schedule is its orbit chip's, moved: the same
  // steps, tags and moved peers, and counts up to Invariance::uneven_bytes.
  // A plan made with images_along (a subset of axes()) compares the chips
  // it planned only: the others are their images by construction.
  Invariance invariance(const CollectivePlan& plan) const;

 private:
  std::vector<char> compared_chips(const CollectivePlan& plan) const;  // per chip: planned

  std::vector<int> axes_;
  std::vector<int> size_, stride_;  // per entry of axes_
  std::vector<int> shape_;          // every ICI axis
  std::vector<bool> wraps_;
  std::vector<bool> dcn_;  // per entry of axes_
  int ici_axes_ = 0;
  int order_ = 1;
  int ici_order_ = 1;          // the product of the ICI axes' sizes among axes_
  int fabric_base_ = INT_MAX;  // the first fabric server's id, where ICI axes leave it in place
  int chips_ = 0, hosts_ = 0, chips_per_host_ = 1, slice_chips_ = 1;
};

}  // namespace interconnect
