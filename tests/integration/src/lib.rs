//! Integration test harness (placeholder).
