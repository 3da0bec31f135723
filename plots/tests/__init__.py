"""Unit tests for the reduction-labs plotting script."""
