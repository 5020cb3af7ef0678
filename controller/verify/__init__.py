"""The dealing-machine verification station: dealt boards checked against their deal file.
"""
