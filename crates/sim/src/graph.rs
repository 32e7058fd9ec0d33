//! The network as data: hosts, duplex links between them, and static routes. Identities are types
//! ([`HostId`], [`LinkId`], [`DirId`], [`FlowId`]), each an index into its table; the two-host scenario is
//! the smallest graph (hosts [`CLIENT`] and [`SERVER`], one link whose directions are [`UP`] and [`DOWN`]).
//!
//! Routing is static shortest path by hop count, ties broken by the lower link id (so a route is a pure
//! function of the topology), computed once per (source, destination) pair when a connection first needs
//! it. Every host forwards what is not addressed to it: a router is a host that runs no application.

use rustc_hash::FxHashMap;
use tcplab_link::LinkConfig;

/// A host (or router): an index into [`crate::SimSpec::hosts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostId(pub u32);

/// A duplex link: an index into [`crate::SimSpec::links`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId(pub u32);

/// One direction of a link. Link `l`'s direction from its `a` end to its `b` end is `DirId(2l)`, the other
/// `DirId(2l + 1)`; the engine never derives one from the other, it looks the ends up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DirId(pub u32);

/// A flow: the application pair a lab test declares (its index among the spec's flows). The engine tags
/// each application with the flow it belongs to so that results can be grouped by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowId(pub u32);

impl HostId {
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl LinkId {
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    /// The direction from the link's `a` end to its `b` end.
    pub const fn forward(self) -> DirId {
        DirId(2 * self.0)
    }
    /// The direction from `b` to `a`.
    pub const fn backward(self) -> DirId {
        DirId(2 * self.0 + 1)
    }
}

impl DirId {
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    pub const fn link(self) -> LinkId {
        LinkId(self.0 / 2)
    }
}

impl std::fmt::Display for HostId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "host {}", self.0)
    }
}

impl std::fmt::Display for DirId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "link {} {}", self.0 / 2, if self.0.is_multiple_of(2) { "forward" } else { "backward" })
    }
}

/// Tables indexed by an id: `run.links[UP]`, `run.nics[CLIENT]`.
macro_rules! indexed_by {
    ($id:ty) => {
        impl<T> std::ops::Index<$id> for [T] {
            type Output = T;
            #[inline(always)]
            fn index(&self, i: $id) -> &T {
                &self[i.index()]
            }
        }
        impl<T> std::ops::IndexMut<$id> for [T] {
            #[inline(always)]
            fn index_mut(&mut self, i: $id) -> &mut T {
                &mut self[i.index()]
            }
        }
        impl<T> std::ops::Index<$id> for Vec<T> {
            type Output = T;
            #[inline(always)]
            fn index(&self, i: $id) -> &T {
                &self[i.index()]
            }
        }
        impl<T> std::ops::IndexMut<$id> for Vec<T> {
            #[inline(always)]
            fn index_mut(&mut self, i: $id) -> &mut T {
                &mut self[i.index()]
            }
        }
    };
}
indexed_by!(HostId);
indexed_by!(DirId);

/// The two-host shape's client and server.
pub const CLIENT: HostId = HostId(0);
pub const SERVER: HostId = HostId(1);
/// The two-host shape's path: link 0 from the client to the server (`up`) and back (`down`).
pub const UP: DirId = LinkId(0).forward();
pub const DOWN: DirId = LinkId(0).backward();

/// A duplex link between hosts `a` and `b`, each direction with its own configuration.
#[derive(Debug, Clone)]
pub struct LinkSpec {
    pub a: HostId,
    pub b: HostId,
    /// `a` → `b`.
    pub forward: LinkConfig,
    /// `b` → `a`.
    pub backward: LinkConfig,
}

/// A route: the directions a packet takes from its source host to its destination.
#[derive(Debug, Clone)]
pub struct Route {
    pub src: HostId,
    pub dst: HostId,
    pub hops: Box<[DirId]>,
}

/// No path joins two hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoRoute {
    pub from: HostId,
    pub to: HostId,
}

/// The topology's adjacency and the routes computed so far (interned: a route's id is stable for the run).
#[derive(Debug)]
pub struct Routes {
    /// Per host, the directions leaving it in link order.
    out: Vec<Vec<DirId>>,
    /// Per direction, the host it leaves and the host it delivers to.
    from: Vec<HostId>,
    to: Vec<HostId>,
    ids: FxHashMap<(HostId, HostId), u32>,
    routes: Vec<Route>,
    /// The search's scratch, kept between routes: per host the direction it was reached by, and the
    /// search that reached it (a new search needs no clearing, so a route costs what its search visits,
    /// not the whole table: a 10,000-flow dumbbell asks for 20,000 routes among 20,002 hosts).
    via: Vec<(u32, Option<DirId>)>,
    search: u32,
}

/// The most hops a route may take (a packet keeps its hop index in a byte).
pub const MAX_HOPS: usize = 255;

impl Routes {
    pub fn new(hosts: usize, links: &[LinkSpec]) -> Self {
        let mut out = vec![Vec::new(); hosts];
        let mut to = Vec::with_capacity(2 * links.len());
        let mut from = Vec::with_capacity(2 * links.len());
        for (l, spec) in links.iter().enumerate() {
            let l = LinkId(l as u32);
            out[spec.a.index()].push(l.forward());
            out[spec.b.index()].push(l.backward());
            from.extend([spec.a, spec.b]);
            to.extend([spec.b, spec.a]);
        }
        Routes { out, from, to, ids: FxHashMap::default(), routes: Vec::new(), via: vec![(0, None); hosts], search: 0 }
    }

    /// The host direction `d` delivers to.
    #[inline(always)]
    pub fn to(&self, d: DirId) -> HostId {
        self.to[d.index()]
    }

    /// The route from `src` to `dst` (breadth first: fewest hops, then lowest link ids), computed once.
    pub fn route(&mut self, src: HostId, dst: HostId) -> Result<u32, NoRoute> {
        if let Some(&id) = self.ids.get(&(src, dst)) {
            return Ok(id);
        }
        self.search += 1;
        let search = self.search;
        let via = &mut self.via;
        via[src.index()] = (search, None);
        let mut frontier = std::collections::VecDeque::from([src]);
        while let Some(h) = frontier.pop_front() {
            if h == dst {
                break;
            }
            for &d in &self.out[h.index()] {
                let t = self.to[d.index()];
                if via[t.index()].0 != search {
                    via[t.index()] = (search, Some(d));
                    frontier.push_back(t);
                }
            }
        }
        if src == dst || via[dst.index()].0 != search {
            return Err(NoRoute { from: src, to: dst });
        }
        let mut hops = Vec::new();
        let mut h = dst;
        while h != src {
            let d = via[h.index()].1.expect("a reached host has the direction it was reached by");
            hops.push(d);
            h = self.from[d.index()];
        }
        hops.reverse();
        if hops.len() > MAX_HOPS {
            return Err(NoRoute { from: src, to: dst });
        }
        let id = self.routes.len() as u32;
        self.routes.push(Route { src, dst, hops: hops.into_boxed_slice() });
        self.ids.insert((src, dst), id);
        Ok(id)
    }

    #[inline(always)]
    pub fn get(&self, id: u32) -> &Route {
        &self.routes[id as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(a: u32, b: u32) -> LinkSpec {
        let cfg = LinkConfig {
            rate: tcplab_units::Rate::from_bps(10_000_000),
            delay: Default::default(),
            queue: Default::default(),
            framing: Default::default(),
            loss: Default::default(),
            mtu: None,
            tick: None,
            idle_credit: Default::default(),
            qdisc: Default::default(),
            jitter: None,
            reorder: false,
        };
        LinkSpec { a: HostId(a), b: HostId(b), forward: cfg.clone(), backward: cfg }
    }

    #[test]
    fn two_hosts_route_over_up_and_down() {
        let mut r = Routes::new(2, &[link(0, 1)]);
        let up = r.route(CLIENT, SERVER).unwrap();
        let down = r.route(SERVER, CLIENT).unwrap();
        assert_eq!(&*r.get(up).hops, &[UP]);
        assert_eq!(&*r.get(down).hops, &[DOWN]);
        assert_eq!(r.route(CLIENT, SERVER), Ok(up), "interned");
    }

    #[test]
    fn dumbbell_routes_through_the_bottleneck_and_parking_lot_takes_every_hop() {
        // Senders 0, 1 — router 4 — router 5 — receivers 2, 3.
        let links = [link(0, 4), link(1, 4), link(4, 5), link(5, 2), link(5, 3)];
        let mut r = Routes::new(6, &links);
        let id = r.route(HostId(1), HostId(3)).unwrap();
        assert_eq!(&*r.get(id).hops, &[LinkId(1).forward(), LinkId(2).forward(), LinkId(4).forward()]);
        let back = r.route(HostId(3), HostId(1)).unwrap();
        assert_eq!(&*r.get(back).hops, &[LinkId(4).backward(), LinkId(2).backward(), LinkId(1).backward()]);
        // A parking lot: routers 0-1-2-3 in a row, hosts 4 on 0 and 5 on 3.
        let lot = [link(0, 1), link(1, 2), link(2, 3), link(4, 0), link(3, 5)];
        let mut r = Routes::new(6, &lot);
        let id = r.route(HostId(4), HostId(5)).unwrap();
        assert_eq!(r.get(id).hops.len(), 5);
        assert_eq!(r.route(HostId(4), HostId(4)), Err(NoRoute { from: HostId(4), to: HostId(4) }));
    }

    #[test]
    fn unjoined_hosts_have_no_route() {
        let mut r = Routes::new(3, &[link(0, 1)]);
        assert_eq!(r.route(HostId(0), HostId(2)), Err(NoRoute { from: HostId(0), to: HostId(2) }));
    }
}
