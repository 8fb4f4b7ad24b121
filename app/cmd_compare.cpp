#include <boost/program_options.hpp>

#include <iostream>

#include "app/cli.h"
#include "app/command_line.h"
#include "app/compare.h"
#include "app/html_page.h"

namespace po = boost::program_options;

namespace app {

int cmd_compare(const std::vector<std::string>& args) {
  po::options_description opts("tpusim compare A B (run folders or report.json files)");
  opts.add_options()("help,h", "this text")("json", po::bool_switch(), "print the comparison as JSON")(
      "html", po::value<std::string>()->value_name("FILE.html"), "also write the two runs side by side as a web page")(
      "a", po::value<std::string>(), "the first run")("b", po::value<std::string>(), "the second run");
  po::positional_options_description pos;
  pos.add("a", 1).add("b", 1);
  po::variables_map vm;
  if (!parse_command_line(args, opts, pos, vm)) return 0;
  if (!vm.count("a") || !vm.count("b")) throw UsageError("compare needs two runs: tpusim compare A B");
  const std::string html = vm.count("html") ? vm["html"].as<std::string>() : "";
  if (vm.count("html")) check_output_file("--html", html);
  const std::string a = vm["a"].as<std::string>(), b = vm["b"].as<std::string>();
  const nlohmann::json cmp = compare_reports(read_report(a), read_report(b), a, b);
  std::cout << (vm["json"].as<bool>() ? cmp.dump(2) + "\n" : compare_text(cmp));
  if (!html.empty()) {
    write_html_page("--html", html, compare_html(cmp));
    if (!vm["json"].as<bool>()) std::cout << "page: " << html << "\n";
  }
  return 0;
}

}  // namespace app
