#pragma once
// A sweep spread over MPI ranks: `mpirun -np K tpusim sweep SWEEP.yaml`
// (OpenMPI from Debian, through the MPI C API).
//
// Every rank loads and expands the same sweep. Rank 0 decides which points
// still need running (--resume) and broadcasts that; the i-th point of the
// run order goes to rank i mod K, which runs it with its own worker
// processes and sends the finished point (record and report) to rank 0.
// Rank 0 writes every point's files and the combined outputs, so ranks on
// machines without a shared file system still end up with one result folder.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sweep/record.h"

namespace sweep {

// True when this process was started by mpirun (its environment says so).
bool launched_by_mpirun();
// True when this tpusim was built with MPI.
bool mpi_available();

class MpiSweep {
 public:
  MpiSweep();   // MPI_Init; throws std::runtime_error without MPI
  ~MpiSweep();  // MPI_Finalize
  MpiSweep(const MpiSweep&) = delete;
  MpiSweep& operator=(const MpiSweep&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int ranks_on_this_node() const { return local_size_; }

  // Rank 0's flags, received by everyone.
  std::vector<char> broadcast(std::vector<char> flags) const;

  // Other ranks: hand a finished point to rank 0; then say there are no more.
  void send_point(const PointRecord& r) const;
  void send_done() const;

  // Rank 0: takes the messages that have arrived, calling `on_point` for
  // each point; returns true once every other rank has said done.
  bool receive(const std::function<void(PointRecord)>& on_point);

 private:
  int rank_ = 0, size_ = 1, local_size_ = 1, done_ = 0;
};

}  // namespace sweep
