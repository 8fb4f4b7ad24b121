#pragma once
// The opcodes XLA prints (openxla/xla, xla/hlo/ir/hlo_opcode.h), and the
// async syntax sugar of its printer: an async-start/-update/-done that wraps
// one instruction prints as `<opcode>-start`/`-update`/`-done` with the
// wrapped instruction's attributes inline (`call-start`, `reduce-scatter-start`,
// `custom-call-start`). Anything else is no HLO tpusim knows how to read:
// the parser stops at it (docs/hlo.md).
#include <string>
#include <vector>

namespace hlo {

// True for an opcode of XLA's list or its async sugar.
bool known_opcode(const std::string& opcode);

// The wrapped opcode of async sugar (`call` for `call-start`, `call-update`
// and `call-done`); empty for every other opcode, including XLA's own async
// ops (`async-start`, `all-gather-start`, `copy-start`, `send`, ...).
std::string sugar_base(const std::string& opcode);

// Every opcode of XLA's list (for suggestions and the fuzz dictionary).
const std::vector<std::string>& opcode_names();

}  // namespace hlo
