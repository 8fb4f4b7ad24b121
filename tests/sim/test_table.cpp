// sim::Table's layout, against tables written out by hand: names in one
// left-aligned column, values right-aligned in the next, and a value too
// long to align (a list of chips) left where that column starts.
#include <catch2/catch.hpp>

#include <string>

#include "sim/output.h"

namespace test_table {

TEST_CASE("table: values right-aligned and a long one does not widen the column", "[table]") {
  sim::Table t("title");
  t.row("step time", "9.35", "s");
  t.row("MFU", "41.2 %");
  t.section("memory");
  t.row("total", "12.0 GiB");
  CHECK(t.str() ==
        "title\n"
        "    step time      9.35 s\n"
        "    MFU          41.2 %\n"
        "  memory\n"
        "    total      12.0 GiB\n");
  const std::string late(60, 'x');  // past the 48 characters that align
  t.row("late chips", late);
  CHECK(t.str() ==
        "title\n"
        "    step time       9.35 s\n"
        "    MFU           41.2 %\n"
        "  memory\n"
        "    total       12.0 GiB\n"
        "    late chips  " +
            late + "\n");
}

}  // namespace test_table
