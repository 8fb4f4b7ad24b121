#include "sweep/mpi.h"

#include <cstdlib>
#include <stdexcept>

#ifdef TPUSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace sweep {

namespace {

[[maybe_unused]] constexpr int kTagPoint = 1;
[[maybe_unused]] constexpr int kTagDone = 2;

}  // namespace

bool launched_by_mpirun() {
  // OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMI launchers (MPICH,
  // Slurm) set PMI_SIZE.
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

#ifdef TPUSIM_HAVE_MPI

bool mpi_available() { return true; }

MpiSweep::MpiSweep() {
  // Workers are started with fork/exec; OpenMPI only warns about fork for
  // transports that pin memory (InfiniBand), which a sweep never uses.
  setenv("OMPI_MCA_mpi_warn_on_fork", "0", 0);
  // Containers often forbid the cross-memory attach that OpenMPI's shared
  // memory transport uses for large messages (reports of big pods); plain
  // copies always work.
  setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

MpiSweep::~MpiSweep() { MPI_Finalize(); }

std::vector<char> MpiSweep::broadcast(std::vector<char> flags) const {
  int n = static_cast<int>(flags.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  flags.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(flags.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  return flags;
}

void MpiSweep::send_point(const PointRecord& r) const {
  const std::string msg = nlohmann::json{{"record", record_json(r)}, {"report", r.report}}.dump();
  MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_CHAR, 0, kTagPoint, MPI_COMM_WORLD);
}

void MpiSweep::send_done() const { MPI_Send(nullptr, 0, MPI_CHAR, 0, kTagDone, MPI_COMM_WORLD); }

bool MpiSweep::receive(const std::function<void(PointRecord)>& on_point) {
  for (;;) {
    if (done_ >= size_ - 1) return true;
    int waiting = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &st);
    if (!waiting) return false;
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    std::string msg(static_cast<std::size_t>(n), '\0');
    MPI_Recv(msg.data(), n, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (st.MPI_TAG == kTagDone) {
      ++done_;
      continue;
    }
    const nlohmann::json j = nlohmann::json::parse(msg);
    PointRecord r = record_from_json(j.at("record"));
    r.report = j.at("report");
    on_point(std::move(r));
  }
}

#else  // built without MPI

bool mpi_available() { return false; }
MpiSweep::MpiSweep() { throw std::runtime_error("this tpusim was built without MPI"); }
MpiSweep::~MpiSweep() = default;
std::vector<char> MpiSweep::broadcast(std::vector<char> flags) const { return flags; }
void MpiSweep::send_point(const PointRecord&) const {}
void MpiSweep::send_done() const {}
bool MpiSweep::receive(const std::function<void(PointRecord)>&) { return true; }

#endif

}  // namespace sweep
