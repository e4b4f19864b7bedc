__all__ = ['ttypes', 'constants', 'FacebookService']
