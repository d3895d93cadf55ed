//! Running a plan: kernels are recorded into one command encoder and submitted together;
//! `cond` and `while` submit what is pending and read their predicate back (the only
//! host round trips), then run the chosen region's plan.

use crate::buffer::GpuBuffer;
use crate::context::Gpu;
use crate::plan::{Plan, Step};
use quabla_abi::abi::AbiError;
use quabla_abi::plugin::DeviceBuffer;
use std::sync::Arc;

struct Recorder<'a> {
    gpu: &'a Arc<Gpu>,
    encoder: Option<wgpu::CommandEncoder>,
}

impl Recorder<'_> {
    fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        let gpu = self.gpu;
        self.encoder.get_or_insert_with(|| {
            gpu.device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor::default())
        })
    }

    fn submit(&mut self) {
        if let Some(e) = self.encoder.take() {
            self.gpu.queue.submit([e.finish()]);
        }
    }
}

/// Reads a scalar (bool or i32) back to the host: submits pending work and waits.
fn read_scalar(b: &GpuBuffer) -> Result<i64, AbiError> {
    let bytes = b.download()?.wait()?;
    Ok(match bytes.len() {
        1 => bytes[0] as i64,
        n if n >= 4 => i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as i64,
        _ => return Err(AbiError::internal("a predicate read back with no bytes")),
    })
}

/// Runs `plan` on `inputs`, returning its outputs.
pub fn run(
    plan: &Plan,
    gpu: &Arc<Gpu>,
    inputs: Vec<Arc<GpuBuffer>>,
) -> Result<Vec<Arc<GpuBuffer>>, AbiError> {
    let mut values: Vec<Option<Arc<GpuBuffer>>> = vec![None; plan.types.len()];
    for (k, b) in inputs.into_iter().enumerate().take(plan.num_inputs) {
        values[k] = Some(b);
    }
    let get = |values: &[Option<Arc<GpuBuffer>>], v: usize| {
        values[v]
            .clone()
            .ok_or_else(|| AbiError::internal(format!("value %{v} read before it was computed")))
    };
    let mut rec = Recorder { gpu, encoder: None };
    for (s, step) in plan.steps.iter().enumerate() {
        match step {
            Step::Constant { value, buffer } => values[*value] = Some(buffer.clone()),
            Step::Alias { from, to } => {
                let b = get(&values, *from)?;
                values[*to] = Some(Arc::new(b.alias(plan.types[*to].clone())));
            }
            Step::Kernel {
                pipeline,
                reads,
                writes,
                groups,
            } => {
                for &w in writes {
                    if values[w].is_none() {
                        let ty = plan.types[w].clone();
                        let buffer = gpu.storage(ty.num_elements());
                        values[w] = Some(Arc::new(GpuBuffer::computed(ty, buffer, gpu.clone())));
                    }
                }
                if plan.types[writes[0]].num_elements() == 0 {
                    continue;
                }
                let bufs = reads
                    .iter()
                    .chain(writes)
                    .map(|&v| get(&values, v))
                    .collect::<Result<Vec<_>, _>>()?;
                let entries: Vec<wgpu::BindGroupEntry> = bufs
                    .iter()
                    .enumerate()
                    .map(|(k, b)| wgpu::BindGroupEntry {
                        binding: k as u32,
                        resource: b.buffer.as_entire_binding(),
                    })
                    .collect();
                let group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &entries,
                });
                let enc = rec.encoder();
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups(groups.0, groups.1, groups.2);
            }
            Step::Cond {
                operands,
                branches,
                results,
            } => {
                rec.submit();
                let idx = read_scalar(&*get(&values, operands[0])?)?;
                let b = if idx < 0 || idx as usize >= branches.len() {
                    branches.len() - 1
                } else {
                    idx as usize
                };
                let args = operands[1..]
                    .iter()
                    .map(|&v| get(&values, v))
                    .collect::<Result<Vec<_>, _>>()?;
                for (r, out) in results.iter().zip(run(&branches[b], gpu, args)?) {
                    values[*r] = Some(out);
                }
            }
            Step::While {
                carry,
                cond,
                body,
                results,
            } => {
                rec.submit();
                let mut c = carry
                    .iter()
                    .map(|&v| get(&values, v))
                    .collect::<Result<Vec<_>, _>>()?;
                loop {
                    let p = run(cond, gpu, c.clone())?;
                    let go = read_scalar(p.first().ok_or_else(|| {
                        AbiError::internal("a while condition returned nothing")
                    })?)?;
                    if go == 0 {
                        break;
                    }
                    c = run(body, gpu, c)?;
                }
                for (r, out) in results.iter().zip(c) {
                    values[*r] = Some(out);
                }
            }
        }
        for &v in &plan.release_after[s] {
            values[v] = None;
        }
    }
    rec.submit();
    plan.outputs.iter().map(|&v| get(&values, v)).collect()
}
