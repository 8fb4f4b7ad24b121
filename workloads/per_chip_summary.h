#pragma once
// report.json's per_chip_summary: every number of per_chip[] (by its dotted
// key, e.g. "busy.mxu_s", "memory.total_bytes") as a distribution over the
// chips: how many entries have it, its minimum and maximum with the chip of
// each (the lowest chip on a tie), and its mean. At summary detail a pod of
// more than kPerChipListedAll entries lists in per_chip only chip 0 and the
// chips the summary names (the outliers): a 1024-chip step's whole list is
// most of a megabyte (docs/report.md).
#include <nlohmann/json.hpp>

#include <cstddef>

namespace workloads {

// Up to this many entries per_chip is written whole at every detail (the
// run page draws at most 64 chips' memory).
inline constexpr std::size_t kPerChipListedAll = 64;

// {chips, fields: {key: {count, min, min_chip, mean, max, max_chip}}} of a
// per_chip array; identity fields (chip, coords, ranks) are not summarised.
nlohmann::json summarize_per_chip(const nlohmann::json& per_chip);

// The entries of `per_chip` that summary detail keeps: every entry when
// there are at most kPerChipListedAll, else chip 0's and those of the chips
// `summary` names, in per_chip's order.
nlohmann::json listed_per_chip(const nlohmann::json& per_chip, const nlohmann::json& summary);

}  // namespace workloads
