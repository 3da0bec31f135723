"""The reduction-labs figures; plots/reduction_plots.py is their command line."""
