//! Short human-readable descriptions of trace entities, shared by `dot`, `diff` and profiles.

use trace_format::{Arg, Command, EdgeKind, Extent, Launch, Node, Place, Trace};

/// A node's kernel name, or its kind for other commands.
pub fn node_title(trace: &Trace, node: &Node) -> String {
    match &node.command {
        Command::Kernel(launch) => trace
            .kernels
            .get(launch.kernel.index())
            .map_or_else(|| format!("kernel {}", launch.kernel), |kernel| kernel.name.clone()),
        other => other.kind_name().to_string(),
    }
}

pub fn edge_kind(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::InOrder => "in_order",
        EdgeKind::Event => "event",
        EdgeKind::Barrier => "barrier",
        EdgeKind::DefaultStream => "default_stream",
        EdgeKind::Memory => "memory",
    }
}

pub fn arg(arg: &Arg) -> String {
    match arg {
        Arg::Value(bytes) => value_bytes(bytes),
        Arg::Memory { mem, offset } => format!("mem {mem} + {offset}"),
        Arg::NullMemory => "null".to_string(),
        Arg::Local(bytes) => format!("local {bytes} bytes"),
        Arg::ValueWithPointers { bytes, pointers } => {
            let targets: Vec<String> = pointers.iter().map(|p| format!("@{}: mem {} + {}", p.at, p.mem, p.offset)).collect();
            format!("{} bytes holding {}", bytes.len(), targets.join(", "))
        }
        Arg::Condition(condition) => format!("condition {condition}"),
        Arg::Texture(texture) => format!("texture {texture}"),
    }
}

/// Up to 8 bytes as the little-endian integer they hold, longer values by their length.
fn value_bytes(bytes: &[u8]) -> String {
    if bytes.len() > 8 {
        return format!("{} bytes", bytes.len());
    }
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    format!("0x{:0width$x}", u64::from_le_bytes(word), width = bytes.len() * 2)
}

pub fn place(place: &Place) -> String {
    match place {
        Place::Memory { mem, offset } => format!("mem {mem} + {offset}"),
        Place::Host { data: Some(blob) } => format!("host (data {blob})"),
        Place::Host { data: None } => "host".to_string(),
    }
}

pub fn extent(extent: &Extent) -> String {
    match extent {
        Extent::Linear { bytes } => format!("{bytes} bytes"),
        Extent::Rect { region, .. } => format!("region {region:?}"),
    }
}

pub fn launch(launch: &Launch) -> String {
    match launch {
        Launch::NdRange { dims, offset, global, local } => {
            let dims = (*dims as usize).clamp(1, 3);
            let mut text = format!("global {:?}", &global[..dims]);
            if let Some(local) = local {
                text += &format!(" local {:?}", &local[..dims]);
            }
            if offset[..dims].iter().any(|&o| o != 0) {
                text += &format!(" offset {:?}", &offset[..dims]);
            }
            text
        }
        Launch::Grid { grid, block, shared_bytes, cluster, cooperative } => {
            let mut text = format!("grid {grid:?} block {block:?}");
            if *shared_bytes > 0 {
                text += &format!(" shared {shared_bytes} bytes");
            }
            if let Some(cluster) = cluster {
                text += &format!(" cluster {cluster:?}");
            }
            if *cooperative {
                text += " cooperative";
            }
            text
        }
    }
}
