"""cloneprobe: audit code models for memorized benchmark solutions."""
