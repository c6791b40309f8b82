//! `kubectl get KIND`: the CRDs' printer columns and kubectl's own (pods, nodes) as tables.

use kueuesim_model::{SchedulerKind, World};

use super::{Namespaces, age, condition, present, table};
use crate::output::SimulationResult;

/// `kubectl get <kind>` at time `at` (seconds since the start).
pub fn get(
    world: &World,
    doc: &SimulationResult,
    kind: &str,
    ns: &Namespaces,
    at: f64,
    wide: bool,
) -> Result<String, String> {
    let all = matches!(ns, Namespaces::All);
    let with_ns = |mut headers: Vec<&'static str>, rows: Vec<(String, Vec<String>)>| {
        if all {
            headers.insert(0, "NAMESPACE");
        }
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|(n, mut r)| {
                if all {
                    r.insert(0, n);
                }
                r
            })
            .collect();
        (headers, rows)
    };
    let (headers, rows): (Vec<&str>, Vec<Vec<String>>) = match kind {
        "clusterqueue" | "clusterqueues" | "cq" => {
            let mut rows = Vec::new();
            for cq in &world.cluster_queues {
                let mine =
                    present(doc, at).filter(|w| w.cluster_queue.as_deref() == Some(&cq.name));
                let (mut pending, mut admitted) = (0, 0);
                for w in mine {
                    match w.state {
                        "Pending" => pending += 1,
                        "Admitted" | "Running" => admitted += 1,
                        _ => {}
                    }
                }
                let cohort = cq
                    .cohort
                    .map(|c| world.cohorts[c.index()].name.clone())
                    .unwrap_or_default();
                let mut r = vec![cq.name.clone(), cohort];
                if wide {
                    r.push(cq.queueing_strategy.as_str().to_string());
                }
                r.push(pending.to_string());
                if wide {
                    r.push(admitted.to_string());
                }
                rows.push(r);
            }
            let headers = if wide {
                vec![
                    "NAME",
                    "COHORT",
                    "STRATEGY",
                    "PENDING WORKLOADS",
                    "ADMITTED WORKLOADS",
                ]
            } else {
                vec!["NAME", "COHORT", "PENDING WORKLOADS"]
            };
            (headers, rows)
        }
        "localqueue" | "localqueues" | "lq" | "queue" | "queues" => {
            let mut rows = Vec::new();
            for lq in world.local_queues.iter().filter(|l| ns.shows(&l.namespace)) {
                let mine = present(doc, at).filter(|w| {
                    w.namespace == lq.namespace && w.local_queue.as_deref() == Some(&lq.name)
                });
                let (mut pending, mut admitted) = (0, 0);
                for w in mine {
                    match w.state {
                        "Pending" => pending += 1,
                        "Admitted" | "Running" => admitted += 1,
                        _ => {}
                    }
                }
                rows.push((
                    lq.namespace.clone(),
                    vec![
                        lq.name.clone(),
                        world.cluster_queue(lq.cluster_queue).name.clone(),
                        pending.to_string(),
                        admitted.to_string(),
                    ],
                ));
            }
            with_ns(
                vec![
                    "NAME",
                    "CLUSTERQUEUE",
                    "PENDING WORKLOADS",
                    "ADMITTED WORKLOADS",
                ],
                rows,
            )
        }
        "cohort" | "cohorts" | "co" => {
            let rows = world
                .cohorts
                .iter()
                .map(|c| vec![c.name.clone(), age(at, 0.0)])
                .collect();
            (vec!["NAME", "AGE"], rows)
        }
        "workload" | "workloads" | "kwl" | "wl" => {
            let rows = present(doc, at)
                .filter(|w| w.kind == "Workload" && ns.shows(&w.namespace))
                .map(|w| {
                    let status =
                        |k: &str| condition(w, k).map_or(String::new(), |c| c.status.to_string());
                    (
                        w.namespace.clone(),
                        vec![
                            w.name.clone(),
                            w.local_queue.clone().unwrap_or_default(),
                            w.admitted_at
                                .and(w.cluster_queue.clone())
                                .filter(|_| {
                                    condition(w, "QuotaReserved")
                                        .is_some_and(|c| c.status == "True")
                                })
                                .unwrap_or_default(),
                            status("Admitted"),
                            status("Finished"),
                            age(at, w.created_at),
                        ],
                    )
                })
                .collect();
            with_ns(
                vec![
                    "NAME",
                    "QUEUE",
                    "RESERVED IN",
                    "ADMITTED",
                    "FINISHED",
                    "AGE",
                ],
                rows,
            )
        }
        "podgroup" | "podgroups" | "pg" => {
            let rows = present(doc, at)
                .filter(|w| ns.shows(&w.namespace))
                .filter_map(|w| {
                    let wl = world
                        .workloads
                        .iter()
                        .find(|x| x.namespace == w.namespace && x.name == w.name)?;
                    if world.config.scheduler(&wl.scheduler_name) != Some(SchedulerKind::Volcano) {
                        return None;
                    }
                    let total: usize = w.pod_sets.iter().map(|p| p.count as usize).sum();
                    let placed: usize = w.pod_sets.iter().map(|p| p.nodes.len()).sum();
                    let min_member = wl.gang.min_member.map_or(total, |m| m as usize);
                    // The PodGroup phase (getPodGroupPhase): Running once minMember pods are
                    // scheduled, Completed when done; Inqueue once Kueue released the pods.
                    let phase = match w.state {
                        "Finished" => "Completed",
                        _ if placed >= min_member && placed > 0 => "Running",
                        "Admitted" | "Running" => "Inqueue",
                        _ => "Pending",
                    };
                    // Pods already running in the input run while the rest of the gang
                    // waits (`status.running` counts running pods).
                    let running = match w.state {
                        "Running" => placed,
                        "Finished" => 0,
                        _ => wl.gang.pre_bound(),
                    };
                    // The input's PodGroup by its name; else the one Volcano's controller
                    // makes for the job (`podgroup-<job>`).
                    let name = match (&wl.gang.pod_group, &wl.owner) {
                        (Some(pg), _) => pg.clone(),
                        (None, Some((_, n))) => format!("podgroup-{n}"),
                        (None, None) => w.name.clone(),
                    };
                    let mut r = vec![
                        name,
                        phase.to_string(),
                        min_member.to_string(),
                        running.to_string(),
                        age(at, w.created_at),
                    ];
                    if wide {
                        r.push("default".into());
                    }
                    Some((w.namespace.clone(), r))
                })
                .collect();
            let headers = if wide {
                vec!["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE", "QUEUE"]
            } else {
                vec!["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE"]
            };
            with_ns(headers, rows)
        }
        "pod" | "pods" | "po" => {
            let (headers, rows) = super::pods::get_pods(world, doc, ns, at, wide);
            with_ns(headers, rows)
        }
        "node" | "nodes" | "no" => {
            // kueuesim's own columns: the GPUs the node's non-terminated pods request, and
            // its allocatable GPUs (kubectl shows neither; `describe node` has both).
            let pods = super::pods::pods_at(world, doc, at);
            let gpu = world.resources.lookup("nvidia.com/gpu");
            let rows = world
                .nodes
                .iter()
                .map(|n| {
                    let (req, alloc) = gpu.map_or((0, 0), |g| {
                        (
                            super::node::requested(world, &pods, &n.name)[g.index()],
                            n.allocatable.get(g.index()).copied().unwrap_or(0),
                        )
                    });
                    vec![
                        n.name.clone(),
                        if n.unschedulable {
                            "Ready,SchedulingDisabled".into()
                        } else {
                            "Ready".into()
                        },
                        "<none>".into(),
                        age(at, 0.0),
                        "<unknown>".into(),
                        req.to_string(),
                        alloc.to_string(),
                    ]
                })
                .collect();
            (
                vec![
                    "NAME",
                    "STATUS",
                    "ROLES",
                    "AGE",
                    "VERSION",
                    "GPU REQUESTS",
                    "GPU ALLOCATABLE",
                ],
                rows,
            )
        }
        other => {
            return Err(format!(
                "the server doesn't have a resource type \"{other}\": expected localqueue, clusterqueue, cohort, workload, podgroup, pod or node"
            ));
        }
    };
    if rows.is_empty() {
        return Ok(match ns {
            Namespaces::One(n)
                if !matches!(
                    kind,
                    "clusterqueue"
                        | "clusterqueues"
                        | "cq"
                        | "cohort"
                        | "cohorts"
                        | "co"
                        | "node"
                        | "nodes"
                        | "no"
                ) =>
            {
                format!("No resources found in {n} namespace.\n")
            }
            _ => "No resources found\n".to_string(),
        });
    }
    Ok(table(&headers, &rows))
}
