#pragma once
// Test initiator for the HBM: one socket and one thread per stream; each
// stream waits until its start, sends one raw TLM payload and records when
// b_transport returned.
#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/hbm.h"

namespace hbm_test {

struct Stream {
  std::uint64_t start_ps = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  bool write = false;
  sc_core::sc_time annotated_delay = sc_core::SC_ZERO_TIME;  // passed into b_transport
};

struct Streams : sc_core::sc_module {
  using Socket = tlm_utils::simple_initiator_socket<Streams>;

  std::vector<Stream> spec;
  std::vector<std::unique_ptr<Socket>> sockets;
  std::vector<sc_core::sc_time> done;  // when b_transport returned
  std::vector<tlm::tlm_response_status> status;
  std::vector<sc_core::sc_time> delay_after;  // the delay argument on return

  Streams(sc_core::sc_module_name name, std::vector<Stream> streams, hw::Hbm& hbm)
      : sc_core::sc_module(name),
        spec(std::move(streams)),
        done(spec.size()),
        status(spec.size(), tlm::TLM_INCOMPLETE_RESPONSE),
        delay_after(spec.size()) {
    for (std::size_t i = 0; i < spec.size(); ++i) {
      sockets.push_back(std::make_unique<Socket>(("s" + std::to_string(i)).c_str()));
      sockets.back()->bind(hbm.socket);
      sc_core::sc_spawn([this, i] { run(i); }, ("t" + std::to_string(i)).c_str());
    }
  }

  void run(std::size_t i) {
    const Stream& s = spec[i];
    wait(sc_core::sc_time::from_value(s.start_ps));
    tlm::tlm_generic_payload p;
    p.set_command(s.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(s.address);
    p.set_data_ptr(nullptr);
    p.set_data_length(static_cast<unsigned int>(s.bytes));
    p.set_streaming_width(static_cast<unsigned int>(s.bytes));
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = s.annotated_delay;
    (*sockets[i])->b_transport(p, delay);
    done[i] = sc_core::sc_time_stamp();
    status[i] = p.get_response_status();
    delay_after[i] = delay;
  }

  std::uint64_t done_ps(std::size_t i) const { return done[i].value(); }
};

}  // namespace hbm_test
