//! Scripted, segment-by-segment tests of the connection (smoltcp style): put a segment in at time t,
//! expect exactly these segments out.
