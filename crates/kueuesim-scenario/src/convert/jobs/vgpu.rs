//! Volcano vGPU requests of a pod template (`volcano.sh/vgpu-number`, `vgpu-memory`,
//! `vgpu-memory-percentage`, `vgpu-cores`), read as Volcano's deviceshare plugin reads them
//! (`devices.ExtractResourceRequest`) and checked for what can never be meant.

use std::collections::BTreeMap;

use serde_saphyr::Spanned;

use kueuesim_model::gpu::{
    VGPU_CORES, VGPU_MEMORY, VGPU_MEMORY_PERCENTAGE, VGPU_MODE, VGPU_NUMBER, VgpuMemory,
    VgpuRequest,
};

use crate::convert::core::{err_at, quantity};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

/// The pod's vGPU request, if a container asks `vgpu-number` or `vgpu-memory` (upstream's
/// `checkVGPUResourcesInPod`; `vgpu-memory` alone asks one device). Each amount is read from
/// the container's limits, else its requests (the API server keeps an extended resource's
/// request equal to its limit). A percentage wins over MiB, and with neither a device's whole
/// memory is asked (`MemPercentagereq` 100). Errors: `vgpu-cores` or
/// `vgpu-memory-percentage` without a device request (the plugin would ignore them),
/// `vgpu-number` 0, a percentage above 100 (no device could ever take it), vGPU requests in
/// several containers and a `vgpu-mode` other than `hami-core` (neither is modelled).
pub(super) fn request(
    src: &ObjectText<'_>,
    spec: &wire::PodSpec,
    annotations: &BTreeMap<String, Spanned<String>>,
) -> Result<Option<VgpuRequest>, ScenarioError> {
    let mut found: Option<(VgpuRequest, &Spanned<String>)> = None;
    for c in &spec.containers {
        let number = get(c, VGPU_NUMBER);
        let memory = get(c, VGPU_MEMORY);
        let Some(first) = number.or(memory) else {
            for r in [VGPU_CORES, VGPU_MEMORY_PERCENTAGE] {
                if let Some(q) = get(c, r) {
                    return Err(err_at(
                        src,
                        q,
                        format!(
                            "{r} without {VGPU_NUMBER} or {VGPU_MEMORY}: Volcano's deviceshare plugin sees no vGPU request (expected {VGPU_NUMBER} in the same container)"
                        ),
                    ));
                }
            }
            continue;
        };
        if found.is_some() {
            return Err(err_at(
                src,
                first,
                "vGPU requests in more than one container are not modelled: expected them in one container of the pod",
            ));
        }
        let number = match number {
            None => 1,
            Some(q) => match quantity(src, VGPU_NUMBER, q)? {
                n if n >= 1 => n.min(i64::from(u32::MAX)) as u32,
                n => {
                    return Err(err_at(
                        src,
                        q,
                        format!("{VGPU_NUMBER} is {n}: expected at least 1 device"),
                    ));
                }
            },
        };
        let percent = |r: &str| -> Result<Option<u8>, ScenarioError> {
            let Some(q) = get(c, r) else { return Ok(None) };
            match quantity(src, r, q)? {
                p @ 0..=100 => Ok(Some(p as u8)),
                p => Err(err_at(
                    src,
                    q,
                    match r {
                        VGPU_CORES => format!(
                            "{r} is {p}: expected a percentage of a device's cores from 0 to 100 (100 takes the device exclusively)"
                        ),
                        _ => format!(
                            "{r} is {p}: expected a percentage of a device's memory from 0 to 100"
                        ),
                    },
                )),
            }
        };
        let mib = match memory {
            None => 0,
            Some(q) => quantity(src, VGPU_MEMORY, q)?.min(i64::from(u32::MAX)) as u32,
        };
        let memory = match (percent(VGPU_MEMORY_PERCENTAGE)?, mib) {
            (Some(p), _) => VgpuMemory::Percent(p),
            (None, 0) => VgpuMemory::Percent(100),
            (None, m) => VgpuMemory::Mib(m),
        };
        let cores = percent(VGPU_CORES)?.unwrap_or(0);
        found = Some((
            VgpuRequest {
                number,
                memory,
                cores,
            },
            first,
        ));
    }
    if found.is_some()
        && let Some(mode) = annotations.get(VGPU_MODE)
        && mode.value.trim() != "hami-core"
    {
        return Err(err_at(
            src,
            mode,
            format!(
                "{VGPU_MODE} {:?} is not modelled: expected \"hami-core\" or no annotation (the simulated vGPU nodes run HAMi-core; MIG is not modelled)",
                mode.value.trim()
            ),
        ));
    }
    Ok(found.map(|(r, _)| r))
}

/// A container's amount of `r`: its limit, else its request.
fn get<'a>(c: &'a wire::Container, r: &str) -> Option<&'a Spanned<String>> {
    c.resources
        .limits
        .get(r)
        .or_else(|| c.resources.requests.get(r))
}
