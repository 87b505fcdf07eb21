//! Disk sizes as PVE spells them (`32G`, `528K`, bytes). (Being written.)
