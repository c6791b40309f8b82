//! The cases of upstream's `allocate/allocateGpuMemory_test.go`.

use super::*;

// allocate/allocateGpuMemory_test.go (upstream's fake nodes have GPUs of 100 MiB)

/// A job of three pending 40 MiB tasks at priority `pc` on node0 (2 GPUs of 100 MiB), queue0
/// deserving 1 GPU up to `limit`.
fn three_memory_shares(pc: &'static str, limit: f64) -> Case {
    case(
        vec![node("node0", 2).gpu_memory(100)],
        vec![queue("queue0", 1.0).limit(limit)],
        vec![job("pending_job-0", "queue0", pc, Gpu::MemoryMib(40)).pending(3)],
    )
}

#[test]
fn memory_shares_of_a_build_job_over_the_deserved_quota_wait() {
    // allocateGpuMemory_test.go, "Non preemptible job requests gpu memory over deserved
    // quota": 3 × 0.4 GPU of a build job against queue0's 1.
    three_memory_shares(BUILD, -1.0)
        .run()
        .waits("pending_job-0");
}

#[test]
fn memory_shares_over_the_queue_limit_wait() {
    // allocateGpuMemory_test.go, "Preemptible job requests gpu memory over queue limit":
    // 3 × 0.4 GPU of a train job against queue0's limit of 1.
    three_memory_shares(TRAIN, 1.0).run().waits("pending_job-0");
}

#[test]
fn a_memory_share_on_an_empty_cluster() {
    // allocateGpuMemory_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // "Basic request gpu by memory when cluster is empty": 50 MiB of node0's 100 MiB GPU.
    let c = case(
        vec![node("node0", 1).gpu_memory(100)],
        vec![queue("queue0", 1.0)],
        vec![job("pending_job-0", "queue0", BUILD, Gpu::MemoryMib(50)).pending(1)],
    );
    c.run()
        .runs("pending_job-0", 60.0, &["node0"])
        .devices_held(1);
}
