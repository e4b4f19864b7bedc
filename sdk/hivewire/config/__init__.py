"""Configuration: flat ``key=value`` settings from files, the environment and flags (Drone Fly's keys too)."""

from hivewire.config._config import Config

__all__ = ["Config"]
