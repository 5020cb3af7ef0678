"""File formats, read and written: PBN, LIN, DUP/BRI/DGE deal files, event files.
"""
